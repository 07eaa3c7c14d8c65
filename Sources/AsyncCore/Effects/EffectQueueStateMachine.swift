/// The jobs a core has submitted and the one consumer that takes them: the
/// task group of `Core.run()`, or a runner task the core starts. Pure:
/// `EffectQueue` runs it under a lock and resumes continuations after.
///
/// The parked waiter is kept with its consumer's id, so a cancellation
/// takes back only its own. Generic so tests drive it with plain values.
struct EffectQueueStateMachine<Job, Waiter> {
  struct Consumer: Equatable {
    let id: Int
    let isService: Bool
  }

  private var jobs: [Job] = []
  private var consumer: Consumer?
  private var nextConsumer = 0
  private var waiter: (consumer: Int, continuation: Waiter)?

  enum EnqueueAction {
    /// Hand these jobs to the parked consumer.
    case resume(Waiter, [Job])
    /// Queued; the consumer will take it.
    case queued
    /// Queued, and nobody consumes: start a runner.
    case startRunner
  }

  mutating func enqueue(_ job: Job) -> EnqueueAction {
    jobs.append(job)
    if let parked = waiter {
      waiter = nil
      defer { jobs = [] }
      return .resume(parked.continuation, jobs)
    }
    return consumer == nil ? .startRunner : .queued
  }

  enum AttachAction {
    /// The new consumer's id; a replaced runner's parked waiter gets `nil`.
    case attached(Int, replaced: Waiter?)
    /// A `run()` already consumes the queue.
    case alreadyRunning
    /// A runner consumes the queue and a runner was asked for.
    case alreadyConsumed
    /// The core has stopped.
    case stopped
  }

  /// `run()` (`asService`) replaces a runner the core started; a runner is
  /// attached only if nobody consumes.
  mutating func attach(asService: Bool, isStopped: Bool) -> AttachAction {
    guard !isStopped else { return .stopped }
    if let consumer {
      if consumer.isService { return asService ? .alreadyRunning : .alreadyConsumed }
      if !asService { return .alreadyConsumed }
    }
    nextConsumer += 1
    consumer = Consumer(id: nextConsumer, isService: asService)
    let replaced = waiter?.continuation
    waiter = nil
    return .attached(nextConsumer, replaced: replaced)
  }

  mutating func detach(_ id: Int) {
    if consumer?.id == id { consumer = nil }
  }

  enum NextAction {
    case take([Job]?)
    case park
  }

  /// Consumer `id` asks for jobs: queued jobs (even for a cancelled
  /// consumer: they run as cancelled children and are accounted for), the
  /// end (replaced, or nothing queued and stopped or cancelled), or park.
  mutating func next(for id: Int, isStopped: Bool, isCancelled: Bool, continuation: Waiter) -> NextAction {
    guard consumer?.id == id else { return .take(nil) }
    if !jobs.isEmpty {
      defer { jobs = [] }
      return .take(jobs)
    }
    if isStopped || isCancelled { return .take(nil) }
    waiter = (id, continuation)
    return .park
  }

  /// Consumer `id`'s task was cancelled: its own parked waiter, if any.
  mutating func cancel(_ id: Int) -> Waiter? {
    guard let parked = waiter, parked.consumer == id else { return nil }
    waiter = nil
    return parked.continuation
  }

  /// The core stopped: the parked consumer ends; with no consumer, queued
  /// jobs are returned to be abandoned.
  mutating func stop() -> (waiter: Waiter?, orphans: [Job]) {
    let parked = waiter?.continuation
    waiter = nil
    guard consumer == nil else { return (parked, []) }
    defer { jobs = [] }
    return (parked, jobs)
  }
}
