/// Runs `EffectQueueStateMachine` under a lock: the jobs a core submitted,
/// taken in batches by one consumer at a time.
@usableFromInline
final class EffectQueue: Sendable {
  typealias Machine = EffectQueueStateMachine<EffectJob, UnsafeContinuation<[EffectJob]?, Never>>

  private let machine = Locked(Machine())
  private let lifecycle: Lifecycle

  init(lifecycle: Lifecycle) {
    self.lifecycle = lifecycle
  }

  // Safety of the unsafe continuations in this type: the state machine
  // removes a waiter as it hands it out, so each is resumed exactly once.

  /// Queues `job`. Returns `false` if nobody consumes the queue: the core
  /// must start a runner.
  @usableFromInline
  func enqueue(_ job: EffectJob) -> Bool {
    switch machine.withLock({ $0.enqueue(job) }) {
    case .resume(let waiter, let jobs):
      waiter.resume(returning: jobs)
      return true
    case .queued:
      return true
    case .startRunner:
      return false
    }
  }

  /// Attaches a consumer; see `EffectQueueStateMachine.attach`.
  func attach(asService: Bool) -> Machine.AttachAction {
    let action = machine.withLock { $0.attach(asService: asService, isStopped: lifecycle.isStopped) }
    if case .attached(_, let replaced?) = action { replaced.resume(returning: nil) }
    return action
  }

  func detach(_ consumer: Int) {
    machine.withLock { $0.detach(consumer) }
  }

  /// The next batch for `consumer`, or `nil` when its loop should end.
  func next(for consumer: Int) async -> [EffectJob]? {
    await withTaskCancellationHandler {
      await withUnsafeContinuation { continuation in
        let action = machine.withLock {
          $0.next(
            for: consumer, isStopped: lifecycle.isStopped, isCancelled: Task.isCancelled,
            continuation: continuation)
        }
        if case .take(let jobs) = action { continuation.resume(returning: jobs) }
      }
    } onCancel: {
      machine.withLock { $0.cancel(consumer) }?.resume(returning: nil)
    }
  }

  /// The core stopped (after `Lifecycle.stop()`): the consumer ends once it
  /// has taken what is queued. Returns jobs nobody will run.
  func stop() -> [EffectJob] {
    let (waiter, orphans) = machine.withLock { $0.stop() }
    waiter?.resume(returning: nil)
    return orphans
  }
}

/// A runner: adds every job as a child task of one discarding task group
/// until the queue ends for `consumer`, then waits for the children.
func runEffectJobs(from queue: EffectQueue, as consumer: Int) async {
  await withDiscardingTaskGroup { group in
    while let jobs = await queue.next(for: consumer) {
      for job in jobs { group.addTask(running: job) }
    }
    // Let a new runner take jobs submitted while these children finish.
    queue.detach(consumer)
  }
}
