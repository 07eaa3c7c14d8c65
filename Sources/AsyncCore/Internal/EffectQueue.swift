/// One effect waiting to become a child task of the core's runner.
struct EffectJob: Sendable {
  let token: Int
  let lineage: Lineage?
  let registry: EffectRegistry
  let priority: TaskPriority?
  let operation: @Sendable () async -> Void

  /// Runs the effect as the current (child) task, registered for
  /// cancellation while it runs; skipped if it was cancelled before it began.
  func run() async {
    await withUnsafeCurrentTask { task in
      if let task, registry.start(token, task: task) { await operation() }
      registry.finish(token)
    }
    lineage?.leave()
  }

  /// Accounts for an effect that will never run (its core was released).
  func abandon() {
    registry.finish(token)
    lineage?.leave()
  }
}

/// The jobs a core has submitted, taken in batches by one runner at a time:
/// the task group of `Core.run()`, or the core's own runner task.
final class EffectQueue: Sendable {
  private struct State {
    var jobs: [EffectJob] = []
    var consumer: Int?
    var consumerIsService = false
    var nextConsumer = 0
    var waiter: UnsafeContinuation<[EffectJob]?, Never>?
    var isFinished = false
  }

  private let state = Locked(State())

  /// Queues `job`. Returns `false` if nobody consumes the queue now: the
  /// core must start a runner.
  func enqueue(_ job: EffectJob) -> Bool {
    var waiter: UnsafeContinuation<[EffectJob]?, Never>?
    var batch: [EffectJob] = []
    let hasConsumer = state.withLock { state -> Bool in
      state.jobs.append(job)
      if let parked = state.waiter {
        waiter = parked
        state.waiter = nil
        swap(&batch, &state.jobs)
      }
      return state.consumer != nil
    }
    // Safety of the unsafe continuation: taken out of `waiter` under the
    // lock, so resumed once.
    waiter?.resume(returning: batch)
    return hasConsumer
  }

  /// Makes `Core.run()` the consumer. A runner the core started is replaced:
  /// its `next` returns nil, its loop ends and its running children finish.
  /// `nil` once the queue has finished.
  func attachService() -> Int? {
    attach(asService: true)
  }

  /// Makes a runner the core starts the consumer, if nobody consumes the
  /// queue; `nil` if somebody does or the queue has finished.
  func attachRunner() -> Int? {
    attach(asService: false)
  }

  private func attach(asService: Bool) -> Int? {
    let (id, replaced) = state.withLock { state -> (Int?, UnsafeContinuation<[EffectJob]?, Never>?) in
      guard !state.isFinished else { return (nil, nil) }
      if asService {
        precondition(
          !state.consumerIsService,
          "AsyncCore: Core.run() is already running for this core; call it from one task"
        )
      } else if state.consumer != nil {
        return (nil, nil)
      }
      state.nextConsumer += 1
      state.consumer = state.nextConsumer
      state.consumerIsService = asService
      defer { state.waiter = nil }
      return (state.nextConsumer, state.waiter)
    }
    // Safety of the unsafe continuation: taken out of `waiter` under the
    // lock, so resumed once.
    replaced?.resume(returning: nil)
    return id
  }

  func detach(_ consumer: Int) {
    state.withLock { state in
      guard state.consumer == consumer else { return }
      state.consumer = nil
      state.consumerIsService = false
    }
  }

  /// The next batch for `consumer`: `nil` once it was replaced, or once
  /// nothing is queued and the queue has finished or the consuming task was
  /// cancelled.
  func next(for consumer: Int) async -> [EffectJob]? {
    await withTaskCancellationHandler {
      await withUnsafeContinuation { continuation in
        let answer: [EffectJob]?? = state.withLock { state in
          // A replaced consumer leaves the jobs to its successor.
          guard state.consumer == consumer else { return .some(nil) }
          // Queued jobs are handed out even to a cancelled consumer: they run
          // as cancelled children (and skip their work if the registry
          // cancelled them), so every job is accounted for.
          if !state.jobs.isEmpty {
            defer { state.jobs = [] }
            return .some(state.jobs)
          }
          if state.isFinished || Task.isCancelled { return .some(nil) }
          state.waiter = continuation
          return nil
        }
        if let answer { continuation.resume(returning: answer) }
      }
    } onCancel: {
      let waiter = state.withLock { state in
        defer { state.waiter = nil }
        return state.consumer == consumer ? state.waiter : nil
      }
      waiter?.resume(returning: nil)
    }
  }

  /// No more jobs will come. A consumer drains what is queued, then its
  /// loop ends; with no consumer, the queued jobs are returned to abandon.
  func finish() -> [EffectJob] {
    let (waiter, orphans) = state.withLock { state -> (UnsafeContinuation<[EffectJob]?, Never>?, [EffectJob]) in
      state.isFinished = true
      let waiter = state.waiter
      state.waiter = nil
      guard state.consumer == nil else { return (waiter, []) }
      defer { state.jobs = [] }
      return (waiter, state.jobs)
    }
    waiter?.resume(returning: nil)
    return orphans
  }
}

/// A runner: adds every job as a child task of one discarding task group
/// until the queue ends for `consumer`, then waits for the children.
func runEffectJobs(from queue: EffectQueue, as consumer: Int) async {
  await withDiscardingTaskGroup { group in
    while let jobs = await queue.next(for: consumer) {
      for job in jobs {
        group.addTask(priority: job.priority) { await job.run() }
      }
    }
    // Let a new runner take jobs submitted while these children finish.
    queue.detach(consumer)
  }
}
