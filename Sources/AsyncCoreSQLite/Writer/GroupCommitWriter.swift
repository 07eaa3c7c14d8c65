import AsyncCore
import AsyncCoreJournal
import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The store's one writer: a thread of its own that commits every request
/// waiting in one transaction, then resumes their callers.
///
/// Blocking SQLite calls and `fsync` never run on the cooperative pool.
/// The turns are ``GroupCommitStateMachine``'s; this storage executes what
/// it returns, and resumes continuations outside the lock.
final class GroupCommitWriter: Sendable {
  typealias Outcome = Result<Void, SQLiteStoreError>

  private struct Waiter: Sendable {
    let request: WriteRequest
    let continuation: CheckedContinuation<Outcome, Never>
  }

  private struct Shared: Sendable {
    var machine = GroupCommitStateMachine()
    var waiting: [UInt64: Waiter] = [:]
    var nextID: UInt64 = 0
    var stopped = false
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
  }

  private let shared = Locked(Shared())
  /// The writer sleeps on it; signalled only when the machine says so.
  private let wake = DispatchSemaphore(value: 0)
  /// Transactions committed, and records in them: the benchmark's rows per commit.
  let commits = Atomic<Int>(0)
  let rows = Atomic<Int>(0)

  /// Starts the writer thread, which owns `connection` from now on.
  init(connection: WriterConnection) throws(SQLiteStoreError) {
    try WriterThread.start { [self] in run(connection) }
  }

  /// Hands `request` to the writer; returns once its transaction committed
  /// (or failed).
  func perform(_ request: WriteRequest) async -> Outcome {
    await withCheckedContinuation { continuation in
      let action = shared.withLock { shared in
        let id = shared.nextID
        shared.nextID += 1
        let action = shared.machine.submit(id)
        if action != .refuse { shared.waiting[id] = Waiter(request: request, continuation: continuation) }
        return action
      }
      switch action {
      case .wakeWriter: wake.signal()
      case .none: break
      case .refuse: continuation.resume(returning: .failure(.closed))
      }
    }
  }

  /// Requests handed over that the writer has not taken yet.
  var waitingCount: Int { shared.withLock { $0.waiting.count } }

  /// Commits what waits, closes the database, ends the thread: returns
  /// when it has.
  func close() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let (action, stopped) = shared.withLock { shared in
        if shared.stopped { return (GroupCommitStateMachine.CloseAction.none, true) }
        shared.closeWaiters.append(continuation)
        return (shared.machine.close(), false)
      }
      if action == .wakeWriter { wake.signal() }
      if stopped { continuation.resume() }
    }
  }

  /// As ``close()``, without waiting (the store's `deinit`).
  func closeWithoutWaiting() {
    if shared.withLock({ $0.machine.close() }) == .wakeWriter { wake.signal() }
  }

  /// The writer thread's loop.
  private func run(_ connection: WriterConnection) {
    loop: while true {
      let (action, waiters) = shared.withLock { $0.machine.nextBatch(taking: &$0.waiting, module: "AsyncCoreSQLite") }
      switch action {
      case .sleep:
        wake.wait()
      case .stop:
        break loop
      case .commit:
        let result = connection.commit(waiters.map(\.request))
        if result.committed {
          commits.add(1, ordering: .relaxed)
          rows.add(result.rows, ordering: .relaxed)
        }
        for (waiter, outcome) in zip(waiters, result.outcomes) { waiter.continuation.resume(returning: outcome) }
      }
    }
    connection.close()
    let waiters = shared.withLock { shared in
      shared.stopped = true
      defer { shared.closeWaiters = [] }
      return shared.closeWaiters
    }
    for waiter in waiters { waiter.resume() }
  }
}

/// A detached POSIX thread running one closure.
enum WriterThread {
  private final class Body {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
  }

  /// Starts a thread that runs `body` once. `body` is not `@Sendable`: it
  /// is handed over, and runs on that thread alone.
  static func start(_ body: @escaping () -> Void) throws(SQLiteStoreError) {
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    #if canImport(Darwin)
      var thread: pthread_t?
      let code = pthread_create(
        &thread, nil,
        { context in
          Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
          return nil
        }, context)
    #else
      var thread = pthread_t()
      let code = pthread_create(
        &thread, nil,
        { context in
          guard let context else { return nil }
          Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
          return nil
        }, context)
    #endif
    guard code == 0 else {
      Unmanaged<Body>.fromOpaque(context).release()
      throw .fileSystem(operation: "pthread_create", path: "", errno: code)
    }
    #if canImport(Darwin)
      if let thread { pthread_detach(thread) }
    #else
      pthread_detach(thread)
    #endif
  }
}
