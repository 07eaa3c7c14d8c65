// Starting effects. `@inlinable`, like dispatching, so a client compiles
// them for its own Action: unspecialised, every effect paid for metadata
// look-ups of `Effect<Action>` and value-witness copies.
extension Core {
  /// Starts `effect`, which the reducer returned. Its synchronous parts
  /// happen now: `.send`s join the follow-ups reduced right after this
  /// action, `.cancel`s cancel. Every part with a `.run` becomes a job for
  /// the effect runner, in `lineage` (made on first need); merged parts
  /// become separate jobs, so each is its own child task.
  @inlinable
  func start(_ effect: Effect<Action>, startedBy origin: Action, lineage: inout Lineage?) {
    switch effect.operation {
    case .none:
      return
    case .send(let action):
      followUps.append(action)
    case .cancel(let id):
      currentEffectContext().registry.cancel(id: id, sparing: [])
      endScopes(livingBy: id)
    case .report(let scopeReport):
      report(scopeReport)
    case .merge(let parts):
      for part in parts { start(part, startedBy: origin, lineage: &lineage) }
    case .concatenate(let parts):
      if effect.isSynchronous {
        for part in parts { start(part, startedBy: origin, lineage: &lineage) }
      } else {
        submit(effect, startedBy: origin, ids: [], lineage: &lineage)
      }
    case .cancellable:
      start(effect, startedBy: origin, cancellableBy: [], lineage: &lineage)
    case .run(let run):
      submit(run, startedBy: origin, ids: [], lineage: &lineage)
    }
  }

  /// Starts `effect`, a part of `.cancellable`s with `ids`: what it runs is
  /// registered under every one of them now, so `cancel(id:)` reaches it
  /// before it starts, and nested `cancelInFlight`s happen now, in reducing
  /// order (not when racing jobs get to them); its synchronous parts happen
  /// now, as in `start`.
  @inlinable
  func start(
    _ effect: Effect<Action>, startedBy origin: Action, cancellableBy ids: [CancelID], lineage: inout Lineage?
  ) {
    switch effect.operation {
    case .cancellable(let id, let cancelInFlight, let inner):
      if cancelInFlight { currentEffectContext().registry.cancel(id: id, sparing: []) }
      start(inner, startedBy: origin, cancellableBy: ids.contains(id) ? ids : ids + [id], lineage: &lineage)
    case .merge(let parts):
      for part in parts { start(part, startedBy: origin, cancellableBy: ids, lineage: &lineage) }
    case .run(let run):
      submit(run, startedBy: origin, ids: ids, lineage: &lineage)
    default:
      if effect.isSynchronous {
        start(effect, startedBy: origin, lineage: &lineage)
      } else {
        submit(effect, startedBy: origin, ids: ids, lineage: &lineage)
      }
    }
  }

  /// Registers `effect` (so `cancel(id:)` reaches it even before it starts)
  /// and queues it for the runner; an effect the core refuses is reported.
  @inlinable
  func submit(_ effect: Effect<Action>, startedBy origin: Action, ids: [CancelID], lineage: inout Lineage?) {
    let context = currentEffectContext()
    if lineage == nil { lineage = Lineage(registry: context.registry) }
    guard let job = context.makeJob(for: effect, startedBy: origin, ids: ids, lineage: lineage, priority: nil)
    else { return }
    enqueueOrHold(job, on: context.queue)
  }

  /// `submit` for a lone `.run`, at its priority.
  @inlinable
  func submit(_ run: Effect<Action>.Run, startedBy origin: Action, ids: [CancelID], lineage: inout Lineage?) {
    let context = currentEffectContext()
    if lineage == nil { lineage = Lineage(registry: context.registry) }
    guard
      let job = context.makeJob(for: run, startedBy: origin, ids: ids, lineage: lineage, priority: run.priority)
    else { return }
    enqueueOrHold(job, on: context.queue)
  }

  /// Queues `job` for the runner; on a durable core, inside a turn, holds
  /// it until the turn's append is durable.
  @inlinable
  func enqueueOrHold(_ job: EffectJob, on queue: EffectQueue) {
    if isHoldingForJournal {
      journal?.heldJobs.append(job)
    } else if !queue.enqueue(job) {
      startEffectRunner()
    }
  }

  /// Starts the core's own runner if nobody (no ``run()``) consumes jobs.
  @usableFromInline
  func startEffectRunner() {
    guard case .attached(let consumer, _) = effectQueue.attach(asService: false) else { return }
    let queue = effectQueue
    // Detached: the runner must not run on the core's executor, and it holds
    // the queue, not the core, so a released core can end it.
    effectRunner = Task.detached { await runEffectJobs(from: queue, as: consumer) }
  }

  /// What effects need from the core, made on first need.
  @inlinable
  func currentEffectContext() -> EffectContext<Action> {
    if let context = effectContext { return context }
    return makeEffectContext()
  }

  /// Effects' `send` reaches the core through a weak reference, so a
  /// running effect does not keep a released core alive.
  @usableFromInline
  func makeEffectContext() -> EffectContext<Action> {
    let reference = CoreReference(self)
    let context = EffectContext<Action>(
      registry: effects, queue: effectQueue, diagnostics: diagnostics,
      accept: { action, lineage in reference.core?.acceptFollowUp(action, lineage: lineage) ?? false },
      clock: clock, dependencies: currentDependencies)
    effectContext = context
    return context
  }
}

/// A weak reference to a core, for effects.
final class CoreReference<State: Sendable, Action: Sendable>: Sendable {
  weak let core: Core<State, Action>?

  init(_ core: Core<State, Action>) {
    self.core = core
  }
}

// MARK: - Effects from outside

extension Core {
  /// Cancels the effects marked with `id`, as a reducer returning
  /// ``Effect/cancel(id:)`` does, from outside a reducer.
  ///
  /// ```swift
  /// // A "Stop" button outside the feature's reducer:
  /// await core.cancelEffects(id: TimerID())
  /// ```
  ///
  /// Actions this task sent before the call are reduced first, so the
  /// effects they start are cancelled too. Ids compare by type and value:
  /// `cancelEffects(id: 1)` does not cancel an effect marked `UInt8(1)`.
  /// What a cancelled effect sends from now on is refused; cancelling an id
  /// nothing is marked with does nothing. Returns once the effects are
  /// marked cancelled and their tasks' cancellation handlers have run, not
  /// once they have ended (await ``waitUntilIdle()`` or an
  /// ``EffectHandle/finish()`` for that).
  ///
  /// - Important: Called from inside an effect marked `id`, it cancels that
  ///   effect too (as `Effect.cancel(id:)` in a `.concatenate` does). A
  ///   reducer cannot call it: it runs inside the core (reaching back in
  ///   stops the program with a message); return `.cancel(id:)` instead.
  public func cancelEffects(id: some Hashable & Sendable) {
    checkNotRunningUserCode()
    flushMailbox()
    effects.cancel(id: CancelID(id), sparing: [])
  }

  /// The dependencies effects started from now on read (see
  /// ``Send/dependencies``).
  ///
  /// ```swift
  /// #expect(await core.dependencies.contains(APIKey.self))
  /// ```
  public var dependencies: Dependencies {
    checkNotRunningUserCode()
    return currentDependencies
  }

  /// Changes the core's dependencies, for the effects started from now on.
  ///
  /// ```swift
  /// await core.updateDependencies { $0.api = FailingAPI() }
  /// try await core.dispatch(.verify("123456"))   // its effect uses FailingAPI
  /// ```
  ///
  /// Actions this task sent before the call are reduced first, with the
  /// effects they start reading the old dependencies. Effects already
  /// started (queued or running) keep the dependencies they started with,
  /// for as long as they run: an effect reads one consistent set.
  ///
  /// - Important: A reducer cannot call it (it runs inside the core;
  ///   reaching back in stops the program with a message).
  public func updateDependencies(_ update: sending (inout Dependencies) -> Void) {
    checkNotRunningUserCode()
    flushMailbox()
    update(&currentDependencies)
    // Effects made from now on get a context with the new dependencies;
    // jobs made before hold the old context, and with it the old ones.
    effectContext = nil
  }
}
