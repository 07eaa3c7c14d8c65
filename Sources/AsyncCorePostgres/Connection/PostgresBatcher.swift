#if Postgres
  import AsyncCore
  import AsyncCoreJournal

  /// A task that takes every request waiting, hands them to `process` as
  /// one batch (one statement, one round trip), then resumes their callers.
  ///
  /// The turns are `GroupCommitStateMachine`'s, as for AsyncCoreSQLite's
  /// writer thread; this storage executes what it returns and resumes
  /// continuations outside the lock.
  final class PostgresBatcher<Request: Sendable, Reply: Sendable>: Sendable {
    private struct Waiter: Sendable {
      let request: Request
      let continuation: CheckedContinuation<Reply, Never>
    }

    private struct Shared: Sendable {
      var machine = GroupCommitStateMachine()
      var waiting: [UInt64: Waiter] = [:]
      var nextID: UInt64 = 0
      /// The task waits here while the machine says sleep.
      var parked: CheckedContinuation<Void, Never>?
      /// A wake-up that came while the task was not parked.
      var woken = false
      var stopped = false
      var closeWaiters: [CheckedContinuation<Void, Never>] = []

      /// The parked task to resume, or a wake-up kept for when it parks.
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
    /// The reply to a request that comes after ``close()``.
    private let refused: Reply
    /// One reply per request, in order.
    private let process: @Sendable ([Request]) async -> [Reply]

    init(refusing refused: Reply, process: @escaping @Sendable ([Request]) async -> [Reply]) {
      self.refused = refused
      self.process = process
      Task { [self] in await run() }
    }

    /// Hands `request` to the batch after the one in progress; returns its reply.
    func perform(_ request: Request) async -> Reply {
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
        if action == .refuse { continuation.resume(returning: refused) }
      }
    }

    /// Processes what waits, then ends the task: returns when it has.
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
          let replies = await process(waiters.map(\.request))
          precondition(
            replies.count == waiters.count,
            "AsyncCorePostgres: a batch of \(waiters.count) had \(replies.count) replies")
          for (waiter, reply) in zip(waiters, replies) { waiter.continuation.resume(returning: reply) }
        }
      }
      let waiters = shared.withLock { shared in
        shared.stopped = true
        defer { shared.closeWaiters = [] }
        return shared.closeWaiters
      }
      for waiter in waiters { waiter.resume() }
    }
  }
#endif
