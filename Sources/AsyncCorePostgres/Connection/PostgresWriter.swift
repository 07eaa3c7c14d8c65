#if Postgres
  import AsyncCore
  import AsyncCoreJournal
  import Synchronization

  /// The store's one writer: a batcher that commits every write waiting in
  /// one statement (one transaction), then resumes their callers.
  final class PostgresWriter: Sendable {
    typealias Outcome = Result<Void, PostgresStoreError>

    enum Request: Sendable {
      case write(PostgresWrite)
      /// Make every commit so far durable (`synchronous_commit` on).
      case sync
    }

    private let batcher: PostgresBatcher<Request, Outcome>
    private let statements: Statements
    var commits: Int { statements.commits.load(ordering: .relaxed) }

    init(session: PostgresSession, schema: PostgresSchema, onConflict: @escaping @Sendable () -> Void) {
      let statements = Statements(session: session, schema: schema, onConflict: onConflict)
      self.statements = statements
      batcher = PostgresBatcher(refusing: .failure(.closed)) { await statements.commit($0) }
    }

    /// Hands `request` to the writer; returns once it committed (or failed).
    func perform(_ request: Request) async -> Outcome { await batcher.perform(request) }

    /// Commits what waits, then ends the writer: returns when it has.
    func close() async { await batcher.close() }

    /// As ``close()``, without waiting (the store's `deinit`).
    func closeWithoutWaiting() { batcher.closeWithoutWaiting() }
  }

  /// What the writer's batches run.
  private final class Statements: Sendable {
    typealias Outcome = PostgresWriter.Outcome
    typealias Request = PostgresWriter.Request
    let session: PostgresSession
    let schema: PostgresSchema
    /// Told of each write another writer's record refused.
    let onConflict: @Sendable () -> Void
    /// Statements committed.
    let commits = Atomic<Int>(0)

    init(session: PostgresSession, schema: PostgresSchema, onConflict: @escaping @Sendable () -> Void) {
      self.session = session
      self.schema = schema
      self.onConflict = onConflict
    }

    /// One batch: the writes in one statement, then the sync if one was asked.
    func commit(_ requests: [Request]) async -> [Outcome] {
      var outcomes = [Outcome](repeating: .success(()), count: requests.count)
      let lease = await session.existing()
      var writes: [(index: Int, write: PostgresWrite)] = []
      for (index, request) in requests.enumerated() {
        guard case .write(let write) = request else { continue }
        // A write of a lost generation: the entity's lock went with it.
        guard let lease, lease.generation == write.generation else {
          outcomes[index] = .failure(.ownershipLost(entity: write.entity))
          continue
        }
        writes.append((index, write))
      }
      if let lease, !writes.isEmpty {
        for (index, outcome) in await commit(writes.map(\.write), on: lease).enumerated() {
          outcomes[writes[index].index] = outcome
        }
      }
      let syncs = requests.indices.filter { if case .sync = requests[$0] { true } else { false } }
      if !syncs.isEmpty {
        let outcome: Outcome
        do {
          let lease = try await session.lease()
          do {
            try await schema.sync(on: lease)
            outcome = .success(())
          } catch {
            outcome = .failure(await failed(error, on: lease).storeError)
          }
        } catch {
          outcome = .failure(error)
        }
        for index in syncs { outcomes[index] = outcome }
      }
      return outcomes
    }

    /// Commits `writes` in one statement; if the server refused it (a
    /// unique key, a row too large, ...), each alone, so that only the
    /// writes it refuses fail.
    private func commit(_ writes: [PostgresWrite], on lease: Lease) async -> [Outcome] {
      do {
        try await schema.commit(writes, on: lease)
        commits.add(1, ordering: .relaxed)
        return Array(repeating: .success(()), count: writes.count)
      } catch {
        let failure = await failed(error, on: lease)
        switch failure {
        case .uniqueViolation where writes.count > 1, .server where writes.count > 1:
          var outcomes: [Outcome] = []
          for write in writes { outcomes += await commit([write], on: lease) }
          return outcomes
        case .uniqueViolation:
          onConflict()
          if case .append(let entity, let first, _, _) = writes[0] {
            return [.failure(.conflict(entity: entity, sequence: first))]
          }
          return [.failure(failure.storeError)]
        case .connection:
          return writes.map { .failure(.ownershipLost(entity: $0.entity)) }
        case .server:
          return Array(repeating: .failure(failure.storeError), count: writes.count)
        }
      }
    }

    /// Classifies `error`; a lost connection ends its generation before
    /// any caller hears of it, so the store's figures already count it.
    private func failed(_ error: any Error, on lease: Lease) async -> PostgresFailure {
      let failure = PostgresFailure(error)
      if case .connection = failure { await session.lost(lease.generation) }
      return failure
    }
  }

#endif
