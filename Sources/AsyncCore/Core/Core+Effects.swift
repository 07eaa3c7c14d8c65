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
  func start(_ effect: Effect<Action>, lineage: inout Lineage?) {
    switch effect.operation {
    case .none:
      return
    case .send(let action):
      followUps.append(action)
    case .cancel(let id):
      currentEffectContext().registry.cancel(id: id, sparing: [])
    case .merge(let parts):
      for part in parts { start(part, lineage: &lineage) }
    case .concatenate(let parts):
      if effect.isSynchronous {
        for part in parts { start(part, lineage: &lineage) }
      } else {
        submit(effect, ids: [], lineage: &lineage)
      }
    case .cancellable:
      start(effect, cancellableBy: [], lineage: &lineage)
    case .run(let run):
      submit(run, ids: [], lineage: &lineage)
    }
  }

  /// Starts `effect`, a part of `.cancellable`s with `ids`: what it runs is
  /// registered under every one of them now, so `cancel(id:)` reaches it
  /// before it starts, and nested `cancelInFlight`s happen now, in reducing
  /// order (not when racing jobs get to them); its synchronous parts happen
  /// now, as in `start`.
  @inlinable
  func start(_ effect: Effect<Action>, cancellableBy ids: [CancelID], lineage: inout Lineage?) {
    switch effect.operation {
    case .cancellable(let id, let cancelInFlight, let inner):
      if cancelInFlight { currentEffectContext().registry.cancel(id: id, sparing: []) }
      start(inner, cancellableBy: ids.contains(id) ? ids : ids + [id], lineage: &lineage)
    case .merge(let parts):
      for part in parts { start(part, cancellableBy: ids, lineage: &lineage) }
    case .run(let run):
      submit(run, ids: ids, lineage: &lineage)
    default:
      if effect.isSynchronous {
        start(effect, lineage: &lineage)
      } else {
        submit(effect, ids: ids, lineage: &lineage)
      }
    }
  }

  /// Registers `effect` (so `cancel(id:)` reaches it even before it starts)
  /// and queues it for the runner; an effect the core refuses is reported.
  @inlinable
  func submit(_ effect: Effect<Action>, ids: [CancelID], lineage: inout Lineage?) {
    let context = currentEffectContext()
    if lineage == nil { lineage = Lineage() }
    guard let job = context.makeJob(for: effect, ids: ids, lineage: lineage, priority: nil) else { return }
    if !context.queue.enqueue(job) { startEffectRunner() }
  }

  /// `submit` for a lone `.run`, at its priority.
  @inlinable
  func submit(_ run: Effect<Action>.Run, ids: [CancelID], lineage: inout Lineage?) {
    let context = currentEffectContext()
    if lineage == nil { lineage = Lineage() }
    guard let job = context.makeJob(for: run, ids: ids, lineage: lineage, priority: run.priority) else { return }
    if !context.queue.enqueue(job) { startEffectRunner() }
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
      clock: clock)
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
