extension Core {
  /// Starts `effect`, which the reducer returned. Its synchronous parts
  /// happen now: `.send`s join the follow-ups reduced right after this
  /// action, `.cancel`s cancel. Every part with a `.run` becomes a job for
  /// the effect runner, in `lineage` (made on first need); merged parts
  /// become separate jobs, so each is its own child task.
  @usableFromInline
  func start(_ effect: Effect<Action>, lineage: inout Lineage?) {
    switch effect.operation {
    case .none:
      return
    case .send(let action):
      followUps.append(action)
    case .cancel(let id):
      effects.cancel(id: id, sparing: [])
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
    case .run:
      submit(effect, ids: [], lineage: &lineage)
    }
  }

  /// Starts `effect`, a part of `.cancellable`s with `ids`: what it runs is
  /// registered under every one of them now, so `cancel(id:)` reaches it
  /// before it starts, and nested `cancelInFlight`s happen now, in reducing
  /// order (not when racing jobs get to them); its synchronous parts happen
  /// now, as in `start`.
  private func start(_ effect: Effect<Action>, cancellableBy ids: [CancelID], lineage: inout Lineage?) {
    switch effect.operation {
    case .cancellable(let id, let cancelInFlight, let inner):
      if cancelInFlight { effects.cancel(id: id, sparing: []) }
      start(inner, cancellableBy: ids.contains(id) ? ids : ids + [id], lineage: &lineage)
    case .merge(let parts):
      for part in parts { start(part, cancellableBy: ids, lineage: &lineage) }
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
  private func submit(_ effect: Effect<Action>, ids: [CancelID], lineage: inout Lineage?) {
    if lineage == nil { lineage = Lineage() }
    let priority: TaskPriority? =
      if case .run(let run) = effect.operation { run.priority } else { nil }
    guard let job = effectContext(lineage: lineage).makeJob(for: effect, ids: ids, priority: priority) else { return }
    if !effectQueue.enqueue(job) { startEffectRunner() }
  }

  /// Starts the core's own runner if nobody (no ``run()``) consumes jobs.
  func startEffectRunner() {
    guard case .attached(let consumer, _) = effectQueue.attach(asService: false) else { return }
    let queue = effectQueue
    // Detached: the runner must not run on the core's executor, and it holds
    // the queue, not the core, so a released core can end it.
    effectRunner = Task.detached { await runEffectJobs(from: queue, as: consumer) }
  }

  /// What effects in `lineage` need from the core. Their `send` reaches it
  /// through a weak reference, so a running effect does not keep a released
  /// core alive.
  private func effectContext(lineage: Lineage?) -> EffectContext<Action> {
    let accept: @Sendable (Action, Lineage?) -> Bool
    if let existing = followUpSink {
      accept = existing
    } else {
      let reference = CoreReference(self)
      accept = { action, lineage in reference.core?.acceptFollowUp(action, lineage: lineage) ?? false }
      followUpSink = accept
    }
    return EffectContext(
      registry: effects, lineage: lineage, diagnostics: diagnostics, accept: accept, clock: clock)
  }
}

/// A weak reference to a core, for effects.
final class CoreReference<State: Sendable, Action: Sendable>: Sendable {
  weak let core: Core<State, Action>?

  init(_ core: Core<State, Action>) {
    self.core = core
  }
}
