import Testing

@testable import AsyncCore

/// The effect queue's jobs and its one consumer, driven directly with plain
/// values for jobs and waiters.
@Suite("Effect queue state machine")
struct EffectQueueStateMachineTests {
  typealias Machine = EffectQueueStateMachine<String, Int>

  @Test("a job with no consumer asks for a runner; with one, it is queued")
  func enqueueWithoutAndWithConsumer() {
    var machine = Machine()
    guard case .startRunner = machine.enqueue("a") else {
      Issue.record("nobody consumes: the core must start a runner")
      return
    }
    guard case .attached(let runner, replaced: nil) = machine.attach(asService: false, isStopped: false) else {
      Issue.record("a runner attaches to an unconsumed queue")
      return
    }
    guard case .queued = machine.enqueue("b") else {
      Issue.record("a consumer is attached: the job is queued")
      return
    }
    guard case .take(let jobs) = machine.next(for: runner, isStopped: false, isCancelled: false, continuation: 1) else {
      Issue.record("queued jobs are taken without parking")
      return
    }
    #expect(jobs == ["a", "b"])
  }

  @Test("a parked consumer is handed the next job at once")
  func parkedConsumerIsResumed() {
    var machine = Machine()
    guard case .attached(let runner, _) = machine.attach(asService: false, isStopped: false) else {
      Issue.record("attach failed")
      return
    }
    guard case .park = machine.next(for: runner, isStopped: false, isCancelled: false, continuation: 7) else {
      Issue.record("an empty queue parks its consumer")
      return
    }
    guard case .resume(let waiter, let jobs) = machine.enqueue("a") else {
      Issue.record("the parked consumer must be resumed with the job")
      return
    }
    #expect(waiter == 7 && jobs == ["a"])
  }

  @Test("run() replaces a runner and ends its parked waiter; a second run() or runner is refused")
  func serviceReplacesRunner() {
    var machine = Machine()
    guard case .attached(let runner, _) = machine.attach(asService: false, isStopped: false) else {
      Issue.record("attach failed")
      return
    }
    _ = machine.next(for: runner, isStopped: false, isCancelled: false, continuation: 1)
    guard case .attached(let service, replaced: 1?) = machine.attach(asService: true, isStopped: false) else {
      Issue.record("run() must replace the runner and hand back its waiter")
      return
    }
    #expect(service != runner)
    guard case .take(nil) = machine.next(for: runner, isStopped: false, isCancelled: false, continuation: 2) else {
      Issue.record("the replaced runner's loop must end")
      return
    }
    guard case .alreadyRunning = machine.attach(asService: true, isStopped: false) else {
      Issue.record("a second run() is refused")
      return
    }
    guard case .alreadyConsumed = machine.attach(asService: false, isStopped: false) else {
      Issue.record("a runner is not attached beside run()")
      return
    }
  }

  @Test("a consumer's cancellation takes back only its own waiter")
  func cancelTakesOwnWaiterOnly() {
    var machine = Machine()
    guard case .attached(let runner, _) = machine.attach(asService: false, isStopped: false) else {
      Issue.record("attach failed")
      return
    }
    _ = machine.next(for: runner, isStopped: false, isCancelled: false, continuation: 5)
    #expect(machine.cancel(runner + 1) == nil)
    #expect(machine.cancel(runner) == 5)
    #expect(machine.cancel(runner) == nil)
  }

  @Test("stopping ends the parked consumer; with no consumer, queued jobs come back as orphans")
  func stopHandsBackOrphans() {
    var consumed = Machine()
    guard case .attached(let runner, _) = consumed.attach(asService: false, isStopped: false) else {
      Issue.record("attach failed")
      return
    }
    _ = consumed.next(for: runner, isStopped: false, isCancelled: false, continuation: 3)
    let (waiter, orphans) = consumed.stop()
    #expect(waiter == 3 && orphans.isEmpty)

    var unconsumed = Machine()
    _ = unconsumed.enqueue("a")
    let (none, left) = unconsumed.stop()
    #expect(none == nil && left == ["a"])
    guard case .stopped = unconsumed.attach(asService: true, isStopped: true) else {
      Issue.record("a stopped core attaches no consumer")
      return
    }
  }

  @Test("a stopped or cancelled consumer with nothing queued ends instead of parking")
  func endsWhenStoppedOrCancelled() {
    var machine = Machine()
    guard case .attached(let runner, _) = machine.attach(asService: false, isStopped: false) else {
      Issue.record("attach failed")
      return
    }
    guard case .take(nil) = machine.next(for: runner, isStopped: false, isCancelled: true, continuation: 1) else {
      Issue.record("a cancelled consumer ends")
      return
    }
    _ = machine.enqueue("a")
    guard case .take(["a"]?) = machine.next(for: runner, isStopped: true, isCancelled: true, continuation: 1) else {
      Issue.record("queued jobs are still taken by a cancelled consumer, to be accounted for")
      return
    }
    machine.detach(runner)
    guard case .startRunner = machine.enqueue("b") else {
      Issue.record("after detaching, nobody consumes")
      return
    }
  }
}
