/// What a running effect needs from its core, without referring to it: a
/// running effect must not keep a released core alive.
struct EffectContext<Action: Sendable>: Sendable {
  let registry: EffectRegistry
  /// The dispatch the effect belongs to, if anyone can wait for it.
  let lineage: Lineage?
  let diagnostics: @Sendable (EffectFailure) -> Void
  /// Queues a follow-up in a lineage; `false` if the core refused it or is gone.
  let accept: @Sendable (Action, Lineage?) -> Bool

  /// The `Send` of effect `token`: accepted only while that effect is live
  /// (neither cancelled nor finished), whichever task calls it.
  func send(for token: Int) -> Send<Action> {
    let registry = self.registry
    let lineage = self.lineage
    let accept = self.accept
    return Send(clock: clock) { action in
      registry.isLive(token) && accept(action, lineage)
    }
  }

  let clock: any Clock<Duration>

  /// Registers `effect` as a job of its own (so `cancel(id:)` reaches it
  /// even before it starts), or reports it if the core refuses effects.
  func makeJob(for effect: Effect<Action>, ids: [CancelID], priority: TaskPriority?) -> EffectJob? {
    guard let token = registry.register(ids: ids, lineage: lineage) else {
      reportRefused(effect)
      return nil
    }
    let send = send(for: token)
    return EffectJob(token: token, registry: registry, priority: priority) {
      await effect.perform(in: self, send: send)
    }
  }

  /// An effect the core refused to start (it is shutting down immediately,
  /// or has stopped): not silently dropped, but reported where it was made
  /// (every effect that needs a task has a `.run`, which knows).
  func reportRefused(_ effect: Effect<Action>) {
    let location = effect.location ?? (#fileID, #line)
    diagnostics(EffectFailure(refusedAt: location.fileID, line: location.line))
  }
}

extension Effect {
  /// Runs this effect in the current task, a child of the core's runner.
  /// Merged and cancellable parts run as child jobs of their own, each with
  /// its own token: cancelling an id stops that part, not its parent.
  func perform(in context: EffectContext<Action>, send: Send<Action>) async {
    switch operation {
    case .none:
      return
    case .send(let action):
      await send(action)
    case .run(let run):
      do {
        try await run.operation(send)
      } catch is CancellationError {
        // Cancellation is how effects are stopped, not a failure.
      } catch {
        if let handler = run.handler {
          await handler(error, send)
        } else {
          context.diagnostics(EffectFailure(error: error, fileID: run.fileID, line: run.line))
        }
      }
    case .merge(let effects):
      // Sends and cancels need no task of their own.
      for effect in effects where effect.isSynchronous { await effect.perform(in: context, send: send) }
      let jobs = effects.lazy.filter { !$0.isSynchronous }.compactMap {
        context.makeJob(for: $0, ids: [], priority: nil)
      }
      await withDiscardingTaskGroup { group in
        for job in jobs { group.addTask { await job.run() } }
      }
    case .concatenate(let effects):
      for effect in effects {
        guard !Task.isCancelled else { return }
        await effect.perform(in: context, send: send)
      }
    case .cancel(let id):
      // An explicit cancel: it may end the effect it is part of.
      context.registry.cancel(id: id, sparing: [])
    case .cancellable(let id, let cancelInFlight, let effect):
      // Never the effect this part is nested in (wrapped twice in the same
      // id, directly or through a child feature): only the newest runs.
      if cancelInFlight {
        context.registry.cancel(id: id, sparing: EffectScope.enclosingTokens(in: context.registry))
      }
      guard let job = context.makeJob(for: effect, ids: [id], priority: nil) else { return }
      await withDiscardingTaskGroup { group in
        group.addTask { await job.run() }
      }
    }
  }
}
