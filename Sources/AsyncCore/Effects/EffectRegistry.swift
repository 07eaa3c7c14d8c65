import Synchronization

/// The effects of one core: cancel ids are scoped to it, so two cores never
/// cancel each other's effects. Runs `EffectRegistryStateMachine` under a
/// lock and resumes continuations after releasing it.
///
/// Tasks are cancelled after the lock, as their cancellation handlers may
/// call back into the core; they are pinned under it first, so a task a
/// canceller holds cannot finish until it unpins.
@usableFromInline
final class EffectRegistry: Sendable {
  private let machine = Locked(EffectRegistryStateMachine())
  /// Taken inside `machine`'s lock, never the other way round; cancellation
  /// handlers take only this one.
  private let waiters = Locked(SettleWaiters())
  private let lifecycle: Lifecycle

  init(lifecycle: Lifecycle) {
    self.lifecycle = lifecycle
  }

  /// A token for a new effect in `lineage`, marked with `ids`, or `nil` if
  /// the core no longer accepts effects.
  @usableFromInline
  func register(ids: [CancelID], lineage: Lineage?) -> Int? {
    // Taken before the lock: only its uniqueness matters there.
    let generation = Self.nextGeneration()
    guard let lineage else {
      return machine.withLock { $0.register(ids: ids, generation: generation, accepted: lifecycle.acceptsEffects) }
    }
    // The lineage is entered inside the lock, where `cancel(lineage:)`
    // looks: an effect registered after its lineage was cancelled is
    // registered cancelled, one registered before is found by that look.
    return machine.withLock { machine in
      guard lifecycle.acceptsEffects else { return nil }
      let isCancelled = lineage.enter()
      return machine.register(
        ids: ids, generation: generation, lineage: ObjectIdentifier(lineage), lineageIsCancelled: isCancelled,
        accepted: true)
    }
  }

  /// A token's generation, from a count every core shares, so it orders
  /// effects across cores (see `EffectObservation`). Relaxed: only calls
  /// already ordered by other means need ordering.
  static func nextGeneration() -> Int {
    generations.wrappingAdd(1, ordering: .relaxed).newValue
  }

  /// Effects registered and not finished: queued for the runner or running.
  var inFlight: Int {
    machine.withLock { $0.inFlight }
  }

  /// Effect `token` begins to run as `job`, in `task`. `false` if it was
  /// cancelled before it began.
  func start(_ token: Int, job: EffectJob, task: UnsafeCurrentTask) -> Bool {
    // Set before the lock publishes the job as running (see `EffectJob.task`).
    job.task = task
    return machine.withLock { $0.start(token, job: job) }
  }

  @usableFromInline
  func isLive(_ token: Int) -> Bool {
    // Under the lock: a job's task is only used while the job is registered.
    machine.withLock { machine in
      switch machine.liveness(token) {
      case .ended, .cancelled: false
      case .pending: true
      case .running(let job): job.task?.isCancelled != true
      }
    }
  }

  /// Why a send of effect `token` was refused, in the order
  /// `CoreDiagnostic.RefusalReason` gives.
  func refusal(of token: Int) -> CoreDiagnostic.RefusalReason {
    machine.withLock { machine in
      let liveness = machine.liveness(token)
      if case .ended = liveness { return .effectEnded }
      guard lifecycle.acceptsEffects else { return .coreStopped }
      switch liveness {
      case .cancelled: return .effectCancelled
      case .running(let job) where job.task?.isCancelled == true: return .effectCancelled
      default: return .coreStopped  // live, so the core refused: it is gone
      }
    }
  }

  /// Effect `token`, in `lineage`, has finished. `false` if it is pinned:
  /// call `finishOnceUnpinned` from that task.
  func finish(_ token: Int, lineage: Lineage?) -> Bool {
    // The lineage is left inside the lock: whoever sees the effect finished
    // (an idle registry, so a returned `shutdown`) sees its lineage done.
    let finished = machine.withLock {
      machine -> ([UnsafeContinuation<Void, Never>], [UnsafeContinuation<Void, Never>])? in
      guard machine.finish(token) == .finished else { return nil }
      return (lineage?.leaveDeferringWakeUps() ?? [], readyWaiters(machine))
    }
    guard let (lineageWaiters, ready) = finished else { return false }
    Lineage.wake(lineageWaiters)
    resume(ready)
    return true
  }

  /// `finish`, for a pinned effect: waits in its task until every canceller
  /// is done with it, then tells its end observers, once it has finished.
  func finishOnceUnpinned(_ token: Int, lineage: Lineage?) async {
    var endObservers: [@Sendable () -> Void] = []
    repeat {
      await withUnsafeContinuation { continuation in
        let park = machine.withLock { $0.parkFinish(token, continuation) }
        endObservers += park.endObservers
        if !park.isParked { continuation.resume() }
      }
    } while !finish(token, lineage: lineage)
    for observer in endObservers { observer() }
  }

  /// Has `observer` called once effect `token` has finished, from its task
  /// after the lock; `false` (and no call) if it has no more work to do.
  func observeEnd(_ token: Int, _ observer: @escaping @Sendable () -> Void) -> Bool {
    machine.withLock { $0.observeEnd(token, observer) }
  }

  /// Called inside `machine`'s lock.
  private func readyWaiters(_ machine: borrowing EffectRegistryStateMachine) -> [UnsafeContinuation<Void, Never>] {
    let (isIdle, isSettled) = (machine.isIdle, machine.isSettled)
    // Neither condition holds (the common case while effects run): no
    // waiter can be ready, so the waiters' lock is not taken.
    guard isIdle || isSettled else { return [] }
    return waiters.withLock { $0.take(isIdle: isIdle, isSettled: isSettled) }
  }

  private func resume(_ ready: [UnsafeContinuation<Void, Never>]) {
    // Safety of the unsafe continuations: `SettleWaiters` removes each as
    // it hands it out, so each is resumed once.
    for waiter in ready { waiter.resume() }
  }

  /// Cancels the effects marked `id`, except `sparing`: the effects a
  /// nested `cancelInFlight` runs inside, which it must not cancel.
  @usableFromInline
  func cancel(id: CancelID, sparing: [Int]) {
    cancelTasks(of: machine.withLock { $0.cancel(id: id, sparing: sparing) })
  }

  func cancelAll() {
    cancelTasks(of: machine.withLock { $0.cancelAll() })
  }

  /// Cancels the effects of `lineage`; those it registers from now on are
  /// registered cancelled (see `register`).
  func cancel(lineage: Lineage) {
    cancelTasks(of: machine.withLock { $0.cancel(lineage: ObjectIdentifier(lineage)) })
  }

  /// Cancels the tasks of the pinned `jobs` outside the lock, then unpins.
  private func cancelTasks(of jobs: [EffectJob]) {
    guard !jobs.isEmpty else { return }
    // Each job is pinned: its task cannot get past `finish` until the
    // `unpin` below, so the task reference is valid here.
    for job in jobs { job.task?.cancel() }
    let finishing = machine.withLock { machine in jobs.compactMap { machine.unpin($0.token) } }
    resume(finishing)
  }

  /// Counts the calling task's enclosing effects as waiting on the core, so
  /// a wait to settle does not wait for itself. Give the result to `endWaiting`.
  func beginWaiting() -> [Int] {
    let tokens = EffectScope.enclosingTokens(in: self)
    guard !tokens.isEmpty else { return [] }
    let (counted, ready) = machine.withLock { machine in
      let counted = machine.beginWaiting(tokens)
      return (counted, readyWaiters(machine))
    }
    resume(ready)
    return counted
  }

  func endWaiting(_ counted: [Int]) {
    guard !counted.isEmpty else { return }
    machine.withLock { $0.endWaiting(counted) }
  }

  /// No effect in flight or, `fromInside` an effect, every effect in flight
  /// waiting on the core.
  func isSettled(fromInside: Bool) -> Bool {
    machine.withLock { fromInside ? $0.isSettled : $0.isIdle }
  }

  /// Waits until `isSettled(fromInside:)`. With `cancellable`, returns early
  /// when the waiting task is cancelled.
  func waitUntilSettled(fromInside: Bool, cancellable: Bool) async {
    let id = waiters.withLock { $0.makeID() }
    let park = { (continuation: UnsafeContinuation<Void, Never>) in
      let parked = self.machine.withLock { machine -> Bool in
        guard !(fromInside ? machine.isSettled : machine.isIdle) else { return false }
        // Checked under the lock `onCancel` takes too: a cancellation either
        // happened before (the flag is set) or will find the waiter.
        return self.waiters.withLock { waiters in
          if cancellable && Task.isCancelled { return false }
          waiters.park(id, untilSettled: fromInside, continuation)
          return true
        }
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
      waiters.withLock { $0.remove(id) }?.resume()
    }
  }
}

private let generations = Atomic<Int>(0)
