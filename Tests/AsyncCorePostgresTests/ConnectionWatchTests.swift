#if Postgres
  import AsyncCore
  import PostgresNIO
  import Testing

  @testable import AsyncCorePostgres

  /// postgres-nio never answers a statement written after its connection's
  /// channel closed; the store's statements are bounded by the connection's
  /// life instead (ConnectionWatch).
  @Suite("PostgreSQL store: a connection's statements end with it")
  struct ConnectionWatchTests {
    @Test("a statement waiting when the connection closes fails with ConnectionEnded; a later one fails at once")
    func closeFailsWaiters() async throws {
      let watch = ConnectionWatch()
      let started = AsyncStream<Void>.makeStream()
      let release = AsyncStream<Void>.makeStream()
      let waiting = Task {
        try await watch.run {
          started.continuation.yield()
          for await _ in release.stream { break }
        }
      }
      var iterator = started.stream.makeAsyncIterator()
      await iterator.next()
      watch.closed()
      await #expect(throws: ConnectionEnded.self) { try await waiting.value }

      await #expect(throws: ConnectionEnded.self) {
        try await watch.run { Issue.record("a statement ran on a closed connection") }
      }
      // The body left behind ends now; its answer goes nowhere.
      release.continuation.finish()
    }

    @Test("a statement that answers first returns its answer, and the close afterwards touches nothing")
    func answerFirst() async throws {
      let watch = ConnectionWatch()
      #expect(try await watch.run { 42 } == 42)
      await #expect(throws: CancellationError.self) { try await watch.run { throw CancellationError() } }
      watch.closed()
    }

    @Test(
      "a statement on a connection that closed (the server ended it) fails with unavailable, not a wait",
      .enabled(if: PostgresServer.isAvailable || PostgresServer.isRequired, Comment(rawValue: PostgresServer.skipped)),
      .timeLimit(.minutes(1)))
    func closedConnection() async throws {
      let connection = try await PostgresServer.connect()
      let lease = Lease(connection: connection, generation: 1)
      try await lease.run("SELECT 1", logger: PostgresServer.logger)
      try await connection.close()
      await #expect {
        try await lease.run("SELECT 1", logger: PostgresServer.logger)
      } throws: { error in
        PostgresFailure(error).storeError == .unavailable(message: "the connection to the server closed")
      }
    }
  }
#endif
