/// The effects of one core: cancel ids are scoped to it, so two cores never
/// cancel each other's effects. Runs `EffectRegistryStateMachine` under a
/// lock and resumes continuations after releasing it.
final class EffectRegistry: Sendable {
  private let machine = Locked(EffectRegistryStateMachine())
  private let lifecycle: Lifecycle

  init(lifecycle: Lifecycle) {
    self.lifecycle = lifecycle
  }

  /// A token for a new effect in `lineage`, or `nil` if the core no longer
  /// accepts effects.
  func register(id: CancelID?, lineage: Lineage?) -> Int? {
    let token = machine.withLock { $0.register(id: id, lineage: lineage, accepted: lifecycle.phase.acceptsEffects) }
    if token != nil { lineage?.enter() }
    return token
  }

  func start(_ token: Int, task: UnsafeCurrentTask) -> Bool {
    machine.withLock { $0.start(token, task: RunningTask(task: task)) }
  }

  func isLive(_ token: Int) -> Bool {
    machine.withLock { $0.isLive(token) }
  }

  func finish(_ token: Int) {
    // The lineage is left inside the lock: whoever sees the effect finished
    // (a settled registry, so a returned `shutdown`) sees its lineage done.
    let (settled, lineageWaiters) = machine.withLock { machine in
      let action = machine.finish(token)
      return (action.settled, action.lineage?.leaveDeferringWakeUps() ?? [])
    }
    Lineage.wake(lineageWaiters)
    // Safety of the unsafe continuations (here and below): the state machine
    // removes each waiter as it hands it out, so each is resumed once.
    for waiter in settled { waiter.resume() }
  }

  /// Cancels the effects marked `id`, except `sparing`: the effects a
  /// nested `cancelInFlight` runs inside, which it must not cancel.
  func cancel(id: CancelID, sparing: [Int]) {
    // Cancelled under the lock: a task reference is only valid until its
    // effect calls `finish`, which takes this lock. Cancellation handlers
    // run synchronously here; none of AsyncCore's takes this lock.
    machine.withLock { machine in
      for running in machine.cancel(id: id, sparing: sparing) { running.task.cancel() }
    }
  }

  func cancelAll() {
    machine.withLock { machine in
      for running in machine.cancelAll() { running.task.cancel() }
    }
  }

  /// Counts the calling task's enclosing effects of this core as waiting
  /// on it, so a wait for the effects to settle does not wait for the effect
  /// that makes it. Give the result back to `endWaiting`.
  func beginWaiting() -> [Int] {
    let tokens = EffectScope.enclosingTokens(in: self)
    guard !tokens.isEmpty else { return [] }
    let (counted, settled) = machine.withLock { $0.beginWaiting(tokens) }
    for waiter in settled { waiter.resume() }
    return counted
  }

  func endWaiting(_ counted: [Int]) {
    guard !counted.isEmpty else { return }
    machine.withLock { $0.endWaiting(counted) }
  }

  var isSettled: Bool { machine.withLock { $0.isSettled } }

  /// Waits until every effect in flight has ended or is waiting on the core
  /// (see `whileWaiting`). With `cancellable`, returns early when the
  /// waiting task is cancelled.
  func waitUntilSettled(cancellable: Bool) async {
    let id = machine.withLock { $0.makeWaiterID() }
    let park = { (continuation: UnsafeContinuation<Void, Never>) in
      // Checked under the lock `onCancel` takes too: a cancellation either
      // happened before (the flag is set) or will find the waiter.
      let parked = self.machine.withLock {
        $0.parkUntilSettled(id, continuation, isCancelled: cancellable && Task.isCancelled)
      }
      if !parked { continuation.resume() }
    }
    guard cancellable else {
      await withUnsafeContinuation(park)
      return
    }
    await withTaskCancellationHandler {
      await withUnsafeContinuation(park)
    } onCancel: {
      machine.withLock { $0.removeSettleWaiter(id) }?.resume()
    }
  }
}
