import AsyncCore
import AsyncCoreSQLite

extension CustomerService {
  /// A service whose customers are kept in the SQLite file at `path`
  /// (made if missing), passivated as `passivation` says, and resumed
  /// from it by the next run.
  ///
  /// ```swift
  /// let service = try CustomerService(
  ///   configuration: .init(customers: 1_000), store: "customers.sqlite",
  ///   passivation: Passivation(idleAfter: .seconds(1), maxActive: 100), console: console)
  /// ```
  ///
  /// Each order is in the file before its `dispatch` returns (the store's
  /// default every-action durability), so what was accepted survives a
  /// `kill -9`.
  ///
  /// - Throws: `SQLiteStoreError` if the file cannot be opened (held by
  ///   another process, written for other types).
  public convenience init(
    configuration: Configuration, store path: String, passivation: Passivation,
    clock: any Clock<Duration> = ContinuousClock(), console: Console
  ) throws {
    let store = try SQLiteEntityStore<Int, Customer, CustomerAction>(path: path)
    self.init(configuration: configuration, store: store, passivation: passivation, clock: clock, console: console)
  }
}
