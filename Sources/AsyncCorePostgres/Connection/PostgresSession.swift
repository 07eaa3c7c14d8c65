#if Postgres
  import AsyncCore
  import Logging
  import PostgresNIO

  /// A connection to the server as the store uses it: the one session its
  /// advisory locks live in.
  struct Lease: Sendable {
    let connection: PostgresConnection
    /// Which connection of the store's this is, from 1: a journal's
    /// ownership holds only while its lease's generation is the current one.
    let generation: UInt64
    let watch = ConnectionWatch()

    init(connection: PostgresConnection, generation: UInt64) {
      self.connection = connection
      self.generation = generation
      connection.closeFuture.whenComplete { [watch] _ in watch.closed() }
    }

    /// Runs `query` and reads its rows to the end: a statement's error (a
    /// unique key's, say) arrives with its rows, not with `query`'s return.
    func run(_ query: PostgresQuery, logger: Logger) async throws {
      _ = try await rows(query, logger: logger)
    }

    /// The rows of `query`, or ``ConnectionEnded`` once the connection closed.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
      let connection = connection
      return try await watch.run { try await connection.query(query, logger: logger).collect() }
    }
  }

  /// The connection closed before the statement's answer came.
  struct ConnectionEnded: Error, CustomStringConvertible {
    var description: String { "the connection to the server closed" }
  }

  /// Statements on one connection, bounded by its life: postgres-nio never
  /// answers a statement written after its channel closed (see
  /// vapor/postgres-nio#487 and #501), so the close fails every statement
  /// still waiting, and any later one at once.
  final class ConnectionWatch: Sendable {
    private struct State: Sendable {
      var closed = false
      var nextID: UInt64 = 0
      /// Each waiting statement's way to fail with ``ConnectionEnded``.
      var waiting: [UInt64: @Sendable () -> Void] = [:]

      /// The id of a new waiter, or `nil` once closed.
      mutating func register(_ fail: @escaping @Sendable () -> Void) -> UInt64? {
        guard !closed else { return nil }
        defer { nextID += 1 }
        waiting[nextID] = fail
        return nextID
      }

      /// Whether waiter `id` is still to be resumed (the close did not).
      mutating func finish(_ id: UInt64) -> Bool {
        waiting.removeValue(forKey: id) != nil
      }

      /// The waiters to fail.
      mutating func close() -> [@Sendable () -> Void] {
        closed = true
        defer { waiting = [:] }
        return Array(waiting.values)
      }
    }

    private let state = Locked(State())

    /// `body`'s result, or ``ConnectionEnded`` if the connection closes
    /// first. `body` runs in a task of its own, which a close leaves behind.
    func run<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) async throws -> R {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
        guard let id = state.withLock({ $0.register { continuation.resume(throwing: ConnectionEnded()) } }) else {
          continuation.resume(throwing: ConnectionEnded())
          return
        }
        Task { [self] in
          let result: Result<R, any Error>
          do {
            result = .success(try await body())
          } catch {
            result = .failure(error)
          }
          if state.withLock({ $0.finish(id) }) { continuation.resume(with: result) }
        }
      }
    }

    /// The connection closed: fails every waiting statement.
    func closed() {
      for fail in state.withLock({ $0.close() }) { fail() }
    }
  }

  /// The store's one connection, made again on demand after it is lost.
  ///
  /// An actor: callers that find no connection wait on one attempt to make
  /// it. The locks die with the session, so a lost generation never comes
  /// back: ``lost(_:)`` tells the store, which fails that generation's
  /// journals.
  actor PostgresSession {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private var current: Lease?
    private var connecting: Task<Result<Lease, PostgresStoreError>, Never>?
    private var generation: UInt64 = 0
    private var isClosed = false
    /// Told of each generation lost, once.
    private let onLost: @Sendable (UInt64) -> Void

    init(
      configuration: PostgresConnection.Configuration, logger: Logger, onLost: @escaping @Sendable (UInt64) -> Void
    ) {
      self.configuration = configuration
      self.logger = logger
      self.onLost = onLost
    }

    /// The current connection, or a new one if there is none.
    func lease() async throws(PostgresStoreError) -> Lease {
      guard !isClosed else { throw .closed }
      if let current {
        guard current.connection.isClosed else { return current }
        lost(current.generation)
      }
      if let connecting { return try await connecting.value.get() }
      let attempt = Task { () -> Result<Lease, PostgresStoreError> in
        defer { connecting = nil }
        do {
          let connection = try await PostgresConnection.connect(
            configuration: configuration, id: Int(truncatingIfNeeded: generation + 1), logger: logger)
          guard !isClosed else {
            try? await connection.close()
            return .failure(.closed)
          }
          generation += 1
          let lease = Lease(connection: connection, generation: generation)
          current = lease
          connection.closeFuture.whenComplete { [weak self] _ in
            Task { await self?.lost(lease.generation) }
          }
          return .success(lease)
        } catch {
          return .failure(.unavailable(message: PostgresFailure.describe(error)))
        }
      }
      connecting = attempt
      return try await attempt.value.get()
    }

    /// The current connection if there is one: the writer never connects
    /// for a journal's write, whose ownership a new connection would not hold.
    /// A closed one is counted lost here, before any caller hears of it.
    func existing() -> Lease? {
      guard let current else { return nil }
      guard !current.connection.isClosed else {
        lost(current.generation)
        return nil
      }
      return current
    }

    /// Generation `generation`'s connection failed or closed.
    func lost(_ generation: UInt64) {
      guard let current, current.generation == generation else { return }
      self.current = nil
      let connection = current.connection
      Task { try? await connection.close() }
      onLost(generation)
    }

    /// Closes the connection: the server releases every lock it held.
    func close() async {
      isClosed = true
      let connecting = self.connecting
      if let connecting { _ = await connecting.value }
      guard let current else { return }
      self.current = nil
      try? await current.connection.close()
      onLost(current.generation)
    }
  }
#endif
