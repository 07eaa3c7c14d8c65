/// What a running effect needs from its core.
struct EffectContext<Action: Sendable>: Sendable {
  let send: Send<Action>
  let registry: EffectRegistry
  let diagnostics: @Sendable (EffectFailure) -> Void
}

extension Effect {
  /// Runs this effect in the current task, which is a child of the core's
  /// runner; merged parts run as children of their own.
  func perform(in context: EffectContext<Action>) async {
    switch operation {
    case .none:
      return
    case .send(let action):
      await context.send(action)
    case .run(let run):
      do {
        try await run.operation(context.send)
      } catch is CancellationError {
        // Cancellation is how effects are stopped, not a failure.
      } catch {
        if let handler = run.handler {
          await handler(error, context.send)
        } else {
          context.diagnostics(EffectFailure(error: error, fileID: run.fileID, line: run.line))
        }
      }
    case .merge(let effects):
      await withDiscardingTaskGroup { group in
        for effect in effects {
          group.addTask { await effect.perform(in: context) }
        }
      }
    case .concatenate(let effects):
      for effect in effects {
        guard !Task.isCancelled else { return }
        await effect.perform(in: context)
      }
    case .cancel(let id):
      context.registry.cancel(id: id)
    case .cancellable(let id, let cancelInFlight, let effect):
      if cancelInFlight { context.registry.cancel(id: id) }
      guard let token = context.registry.register(id: id) else { return }
      // A child task of its own, so that cancelling `id` stops this part
      // and not the effect it is nested in.
      let job = EffectJob(token: token, lineage: nil, registry: context.registry, priority: nil) {
        await effect.perform(in: context)
      }
      await withDiscardingTaskGroup { group in
        group.addTask { await job.run() }
      }
    }
  }
}
