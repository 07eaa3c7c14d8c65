/// The waiters for a one-time end (a core's stop, a registry's close), keyed
/// by id: pure state under its owner's lock. What its methods return is
/// resumed outside the lock.
struct FinishSignal: Sendable {
  private(set) var hasFinished = false
  private var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
  private var nextID = 0

  mutating func makeID() -> Int {
    nextID += 1
    return nextID
  }

  /// Holds `continuation` under `id`, or returns what to resume it with at
  /// once: `true` if the end has come, `false` if the waiter is `cancelled`.
  mutating func wait(_ id: Int, _ continuation: CheckedContinuation<Bool, Never>, cancelled: Bool) -> Bool? {
    if hasFinished { return true }
    if cancelled { return false }
    waiters[id] = continuation
    return nil
  }

  /// The waiter `id` was cancelled: to be resumed with `false`.
  mutating func cancel(_ id: Int) -> CheckedContinuation<Bool, Never>? {
    waiters.removeValue(forKey: id)
  }

  /// The end has come: every waiter, to be resumed with `true`.
  mutating func finish() -> [CheckedContinuation<Bool, Never>] {
    hasFinished = true
    defer { waiters = [:] }
    return Array(waiters.values)
  }
}

/// Something that keeps a `FinishSignal` under its lock.
protocol FinishSignalOwner: Sendable {
  func withFinishSignal<Result>(_ body: (inout FinishSignal) -> Result) -> Result
}

extension FinishSignalOwner {
  /// Returns `true` once the end has come, `false` if the calling task is
  /// cancelled first.
  func waitUntilFinished() async -> Bool {
    let id = withFinishSignal { $0.makeID() }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let now = withFinishSignal { $0.wait(id, continuation, cancelled: Task.isCancelled) }
        if let now { continuation.resume(returning: now) }
      }
    } onCancel: {
      withFinishSignal { $0.cancel(id) }?.resume(returning: false)
    }
  }

  /// The end has come: resumes every waiter.
  func finishSignal() {
    for waiter in withFinishSignal({ $0.finish() }) { waiter.resume(returning: true) }
  }
}
