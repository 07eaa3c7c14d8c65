extension Core {
  /// Starts `effect`: follow-ups go to the mailbox, cancellations happen
  /// now, and every piece of work becomes a job for the effect runner.
  ///
  /// Merged effects become separate jobs, so each is its own child task.
  @usableFromInline
  func start(_ effect: Effect<Action>, lineage: Lineage?) {
    switch effect.operation {
    case .none:
      return
    case .send(let action):
      acceptFollowUp(action, lineage: lineage)
    case .cancel(let id):
      effects.cancel(id: id)
    case .merge(let parts):
      for part in parts { start(part, lineage: lineage) }
    case .cancellable(let id, let cancelInFlight, let inner):
      if cancelInFlight { effects.cancel(id: id) }
      submit(inner, id: id, lineage: lineage)
    case .run, .concatenate:
      submit(effect, id: nil, lineage: lineage)
    }
  }

  /// Registers `effect` (so `cancel(id:)` reaches it even before it starts)
  /// and queues it for the runner.
  private func submit(_ effect: Effect<Action>, id: CancelID?, lineage: Lineage?) {
    // A core shutting down immediately starts no new effect.
    guard let token = effects.register(id: id) else { return }
    lineage?.enter()
    let context = EffectContext(send: makeSend(lineage: lineage), registry: effects, diagnostics: diagnostics)
    let priority: TaskPriority? =
      if case .run(let run) = effect.operation { run.priority } else { nil }
    let job = EffectJob(token: token, lineage: lineage, registry: effects, priority: priority) {
      await effect.perform(in: context)
    }
    if !effectQueue.enqueue(job) { startEffectRunner() }
  }

  /// Starts the core's own runner if nobody (no ``run()``) consumes jobs.
  func startEffectRunner() {
    guard let consumer = effectQueue.attachRunner() else { return }
    let queue = effectQueue
    // Detached: the runner must not run on the core's executor, and it holds
    // the queue, not the core, so a released core can end it.
    effectRunner = Task.detached { await runEffectJobs(from: queue, as: consumer) }
  }

  /// The `Send` of effects in `lineage`: it reaches the core through a weak
  /// reference, so a running effect does not keep a released core alive.
  private func makeSend(lineage: Lineage?) -> Send<Action> {
    let reference = self.reference ?? CoreReference(self)
    self.reference = reference
    return Send(clock: clock) { action in
      reference.core?.acceptFollowUp(action, lineage: lineage) ?? false
    }
  }

  /// Queues an action an effect sent, in its lineage.
  @discardableResult
  nonisolated func acceptFollowUp(_ action: Action, lineage: Lineage?) -> Bool {
    // Entered before the action is visible to the drain, which leaves.
    lineage?.enter()
    let accepted = handle(enqueue { $0.send(Envelope(action: action, lineage: lineage), fromEffect: true) })
    if !accepted { lineage?.leave() }
    return accepted
  }
}

/// A weak reference to a core, for effects.
final class CoreReference<State: Sendable, Action: Sendable>: Sendable {
  weak let core: Core<State, Action>?

  init(_ core: Core<State, Action>) {
    self.core = core
  }
}
