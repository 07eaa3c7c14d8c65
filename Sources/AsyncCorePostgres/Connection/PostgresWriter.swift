#if Postgres
  import AsyncCore
  import AsyncCoreJournal
  import Synchronization

  /// The store's one writer: a task that commits every write waiting in one
  /// statement (one transaction), then resumes their callers.
  ///
  /// The turns are `GroupCommitStateMachine`'s, as for AsyncCoreSQLite's
  /// writer thread; this storage executes what it returns and resumes
  /// continuations outside the lock.
  final class PostgresWriter: Sendable {
    typealias Outcome = Result<Void, PostgresStoreError>

    enum Request: Sendable {
      case write(PostgresWrite)
      /// Make every commit so far durable (`synchronous_commit` on).
      case sync
    }

    private struct Waiter: Sendable {
      let request: Request
      let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct Shared: Sendable {
      var machine = GroupCommitStateMachine()
      var waiting: [UInt64: Waiter] = [:]
      var nextID: UInt64 = 0
      /// The writer task waits here while the machine says sleep.
      var parked: CheckedContinuation<Void, Never>?
      /// A wake-up that came while the writer was not parked.
      var woken = false
      var stopped = false
      var closeWaiters: [CheckedContinuation<Void, Never>] = []

      /// The parked writer to resume, or a wake-up kept for when it parks.
      mutating func wake() -> CheckedContinuation<Void, Never>? {
        guard let parked else {
          woken = true
          return nil
        }
        self.parked = nil
        return parked
      }
    }

    private let shared = Locked(Shared())
    private let session: PostgresSession
    private let schema: PostgresSchema
    /// Told of each write another writer's record refused.
    private let onConflict: @Sendable () -> Void
    /// Statements committed, and records in them.
    let commits = Atomic<Int>(0)
    let rows = Atomic<Int>(0)

    init(session: PostgresSession, schema: PostgresSchema, onConflict: @escaping @Sendable () -> Void) {
      self.session = session
      self.schema = schema
      self.onConflict = onConflict
      Task { [self] in await run() }
    }

    /// Hands `request` to the writer; returns once it committed (or failed).
    func perform(_ request: Request) async -> Outcome {
      await withCheckedContinuation { continuation in
        let (action, parked) = shared.withLock {
          shared -> (GroupCommitStateMachine.SubmitAction, CheckedContinuation<Void, Never>?) in
          let id = shared.nextID
          shared.nextID += 1
          let action = shared.machine.submit(id)
          if action != .refuse { shared.waiting[id] = Waiter(request: request, continuation: continuation) }
          return (action, action == .wakeWriter ? shared.wake() : nil)
        }
        parked?.resume()
        if action == .refuse { continuation.resume(returning: .failure(.closed)) }
      }
    }

    /// Commits what waits, then ends the writer: returns when it has.
    func close() async {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let (parked, stopped) = shared.withLock { shared -> (CheckedContinuation<Void, Never>?, Bool) in
          if shared.stopped { return (nil, true) }
          shared.closeWaiters.append(continuation)
          return (shared.machine.close() == .wakeWriter ? shared.wake() : nil, false)
        }
        parked?.resume()
        if stopped { continuation.resume() }
      }
    }

    /// As ``close()``, without waiting (the store's `deinit`).
    func closeWithoutWaiting() {
      let parked = shared.withLock { shared in shared.machine.close() == .wakeWriter ? shared.wake() : nil }
      parked?.resume()
    }

    private func run() async {
      loop: while true {
        let (action, waiters) = shared.withLock {
          $0.machine.nextBatch(taking: &$0.waiting, module: "AsyncCorePostgres")
        }
        switch action {
        case .sleep:
          await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = shared.withLock { shared -> Bool in
              guard !shared.woken else {
                shared.woken = false
                return true
              }
              shared.parked = continuation
              return false
            }
            if now { continuation.resume() }
          }
        case .stop:
          break loop
        case .commit:
          let outcomes = await commit(waiters.map(\.request))
          for (waiter, outcome) in zip(waiters, outcomes) { waiter.continuation.resume(returning: outcome) }
        }
      }
      let waiters = shared.withLock { shared in
        shared.stopped = true
        defer { shared.closeWaiters = [] }
        return shared.closeWaiters
      }
      for waiter in waiters { waiter.resume() }
    }

    /// One batch: the writes in one statement, then the sync if one was asked.
    private func commit(_ requests: [Request]) async -> [Outcome] {
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

    /// Commits `writes` in one statement; if a unique key refused it, each
    /// alone, so that only the writes another writer overtook fail.
    private func commit(_ writes: [PostgresWrite], on lease: Lease) async -> [Outcome] {
      do {
        try await schema.commit(writes, on: lease)
        commits.add(1, ordering: .relaxed)
        rows.add(writes.reduce(0) { $0 + $1.rowCount }, ordering: .relaxed)
        return Array(repeating: .success(()), count: writes.count)
      } catch {
        let failure = await failed(error, on: lease)
        switch failure {
        case .uniqueViolation where writes.count > 1:
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

  extension PostgresWrite {
    var rowCount: Int {
      switch self {
      case .append(_, _, let bodies, _): bodies.count
      case .snapshot: 1
      }
    }
  }
#endif
