import AsyncCore
import AsyncCoreJournal

/// The service's core: a `Core` in memory, or, with `--journal PATH`, a
/// `JournaledCore` that writes each order to a journal on disk before it
/// counts, and recovers the totals when the service starts again on it.
///
/// ```swift
/// let store = try await OrderStore.journaled(directory: "orders.journal", clock: ContinuousClock())
/// let counts = await store.observe(\.reduced)
/// ```
///
/// Both kinds are driven the same way; what differs is ``place(_:)``: in
/// memory it queues the order (`send`) and returns at once; on a journal it
/// returns once the order is on disk and reduced (`dispatch`, under the
/// journal's default every-action durability), so what the producers
/// acknowledge survives a `kill -9`.
public struct OrderStore: Sendable {
  private enum Backing: Sendable {
    case memory(Core<Orders, OrderAction>)
    case journal(JournaledCore<Orders, OrderAction>)
  }

  private let backing: Backing

  /// A core in memory: its orders end with the process.
  static func memory(clock: any Clock<Duration>) -> OrderStore {
    OrderStore(backing: .memory(Core(initialState: Orders(), clock: clock, reducer: Reduce(Orders.reduce))))
  }

  /// A core on the journal in `directory` (made if missing), with the
  /// orders it holds already reduced.
  ///
  /// - Throws: `JournaledCoreError` if the journal cannot be opened: held
  ///   by another process, written for other types, unreadable.
  static func journaled(directory: String, clock: any Clock<Duration>) async throws(JournaledCoreError) -> OrderStore {
    let core = try await JournaledCore(
      directory: directory, initialState: Orders(), clock: clock,
      reducer: { (state: inout Orders, action: OrderAction) in
        Orders.reduce(&state, action)
        return .none
      })
    return OrderStore(backing: .journal(core))
  }

  /// Whether the orders go to a journal.
  public var isJournaled: Bool {
    if case .journal = backing { return true }
    return false
  }

  /// Places `order`: queues it in memory, or journals and reduces it.
  ///
  /// - Throws: `JournaledCoreError.shutDown` once the core has begun to
  ///   shut down (the order is not accepted); on a journal, the journal's
  ///   error when the disk refused it (then it was not reduced).
  func place(_ order: Order) async throws(JournaledCoreError) {
    switch backing {
    case .memory(let core):
      guard core.send(.placed(order)) == .accepted else { throw .shutDown }
    case .journal(let core):
      try await core.dispatch(.placed(order))
    }
  }

  /// Ties the core to the calling task, as `Core.run()`: returns once the
  /// core has shut down, and shuts it down at once if the task is cancelled.
  func run() async throws(CoreError) {
    switch backing {
    case .memory(let core):
      try await core.run()
    case .journal(let core):
      try await core.run()
    }
  }

  /// Observes a part of the state, as `Core.observe(_:removeDuplicates:buffering:)`.
  public func observe<Props: Sendable>(
    _ keyPath: KeyPath<Orders, Props> & Sendable,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<Props> {
    switch backing {
    case .memory(let core): await core.observe(keyPath, removeDuplicates: isDuplicate, buffering: policy)
    case .journal(let core): await core.observe(keyPath, removeDuplicates: isDuplicate, buffering: policy)
    }
  }

  /// Queues `action`, as `Core.send(_:)`.
  @discardableResult
  public func send(_ action: OrderAction) -> SendResult {
    switch backing {
    case .memory(let core): core.send(action)
    case .journal(let core): core.send(action)
    }
  }

  /// The state with every order accepted before the call.
  public var state: Orders {
    get async {
      switch backing {
      case .memory(let core): await core.state
      case .journal(let core): await core.state
      }
    }
  }

  /// Whether the core has begun to shut down.
  public var hasShutDown: Bool {
    switch backing {
    case .memory(let core): core.hasShutDown
    case .journal(let core): core.hasShutDown
    }
  }

  /// The core's load figures.
  public var metrics: CoreMetrics {
    switch backing {
    case .memory(let core): core.metrics
    case .journal(let core): core.metrics
    }
  }

  /// Shuts the core down (and, on a journal, syncs and closes it).
  public func shutdown(_ mode: ShutdownMode = .graceful) async {
    switch backing {
    case .memory(let core): await core.shutdown(mode)
    case .journal(let core): await core.shutdown(mode)
    }
  }
}
