#if Postgres
  import Logging
  import PostgresNIO

  /// A connection to the server as the store uses it: the one session its
  /// advisory locks live in.
  struct Lease: Sendable {
    let connection: PostgresConnection
    /// Which connection of the store's this is, from 1: a journal's
    /// ownership holds only while its lease's generation is the current one.
    let generation: UInt64
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
    func existing() -> Lease? {
      guard let current, !current.connection.isClosed else { return nil }
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
