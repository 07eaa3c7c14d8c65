/// What a core's running effects need from it, without referring to it (a
/// running effect must not keep a released core alive). One per core, made
/// on its first effect, shared by every job: a job holds one reference
/// instead of five.
@usableFromInline
final class EffectContext<Action: Sendable>: Sendable {
  @usableFromInline let registry: EffectRegistry
  @usableFromInline let queue: EffectQueue
  @usableFromInline let diagnostics: @Sendable (EffectFailure) -> Void
  /// Queues a follow-up in a lineage; `false` if the core refused it or is gone.
  @usableFromInline let accept: @Sendable (Action, Lineage?) -> Bool
  @usableFromInline let clock: any Clock<Duration>

  init(
    registry: EffectRegistry,
    queue: EffectQueue,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void,
    accept: @escaping @Sendable (Action, Lineage?) -> Bool,
    clock: any Clock<Duration>
  ) {
    self.registry = registry
    self.queue = queue
    self.diagnostics = diagnostics
    self.accept = accept
    self.clock = clock
  }

  /// Registers `effect` as a job of its own in `lineage` (so `cancel(id:)`
  /// reaches it even before it starts), or reports it if the core refuses
  /// effects.
  @inlinable
  func makeJob(for effect: Effect<Action>, ids: [CancelID], lineage: Lineage?, priority: UInt8?) -> EffectJob? {
    guard let token = registry.register(ids: ids, lineage: lineage) else {
      reportRefused(effect)
      return nil
    }
    return ActionEffectJob(token: token, effect: effect, context: self, lineage: lineage, priority: priority)
  }

  /// An effect the core refused to start (it is shutting down immediately,
  /// or has stopped): not silently dropped, but reported where it was made
  /// (every effect that needs a task has a `.run`, which knows).
  @usableFromInline
  func reportRefused(_ effect: Effect<Action>) {
    let location = effect.location ?? (#fileID, #line)
    diagnostics(EffectFailure(refusedAt: location.fileID, line: location.line))
  }
}

/// An effect job for a core with actions of type `Action`: the effect, and
/// what running it needs. Its work is a function made where `Action` is
/// known (the client's module, through `@inlinable`), so running it is
/// compiled for the client's types instead of running unspecialised.
@usableFromInline
final class ActionEffectJob<Action: Sendable>: EffectJob, @unchecked Sendable {
  // Safety: the properties added here are immutable and Sendable; the one
  // mutable field is `EffectJob.parent`, whose proof is there.
  @usableFromInline let effect: Effect<Action>
  @usableFromInline let context: EffectContext<Action>

  @inlinable
  init(token: Int, effect: Effect<Action>, context: EffectContext<Action>, lineage: Lineage?, priority: UInt8?) {
    self.effect = effect
    self.context = context
    // A closure with no captures: no allocation, and specialised with the
    // code that makes the job.
    super.init(token: token, registry: context.registry, lineage: lineage, priority: priority) { job in
      await unsafeDowncast(job, to: ActionEffectJob<Action>.self).perform()
    }
  }

  /// Runs the effect in the current task, the job's child task.
  @inlinable
  func perform() async {
    // The closure captures only the job: its context is the job itself,
    // not a new allocation.
    let send = Send<Action>(clock: context.clock) { [self] action in deliver(action) }
    // A lone `.run` (the common case) through its own small function: an
    // async call allocates its callee's frame on the task's stack, and
    // `Effect.perform`'s frame, sized for every kind of effect, overflows a
    // child task's first slab into a `malloc`.
    if case .run(let run) = effect.operation {
      await run.perform(send: send, diagnostics: context.diagnostics)
    } else {
      await effect.perform(in: context, lineage: lineage, send: send)
    }
  }

  /// The `Send` of this effect: accepted only while it is live (neither
  /// cancelled nor finished), whichever task calls it.
  @inlinable
  func deliver(_ action: Action) -> Bool {
    registry.isLive(token) && context.accept(action, lineage)
  }
}

extension Effect {
  /// Runs this effect in the current task, a child of the core's runner.
  /// Merged and cancellable parts run as child jobs of their own, each with
  /// its own token: cancelling an id stops that part, not its parent.
  @inlinable
  func perform(in context: EffectContext<Action>, lineage: Lineage?, send: Send<Action>) async {
    switch operation {
    case .none:
      return
    case .send(let action):
      await send(action)
    case .run(let run):
      await run.perform(send: send, diagnostics: context.diagnostics)
    case .merge(let effects):
      // Sends and cancels need no task of their own.
      for effect in effects where effect.isSynchronous {
        await effect.perform(in: context, lineage: lineage, send: send)
      }
      let jobs = effects.lazy.filter { !$0.isSynchronous }.compactMap {
        context.makeJob(for: $0, ids: [], lineage: lineage, priority: nil)
      }
      await withDiscardingTaskGroup { group in
        for job in jobs { group.addTask { await job.run() } }
      }
    case .concatenate(let effects):
      for effect in effects {
        guard !Task.isCancelled else { return }
        await effect.perform(in: context, lineage: lineage, send: send)
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
      guard let job = context.makeJob(for: effect, ids: [id], lineage: lineage, priority: nil) else { return }
      await withDiscardingTaskGroup { group in
        group.addTask { await job.run() }
      }
    }
  }
}

extension Effect.Run {
  /// Runs the operation; an error it throws goes to the handler, or else
  /// to `diagnostics` with the place the effect was made.
  @inlinable
  func perform(send: Send<Action>, diagnostics: @Sendable (EffectFailure) -> Void) async {
    do {
      try await operation(send)
    } catch is CancellationError {
      // Cancellation is how effects are stopped, not a failure.
    } catch {
      if let handler {
        await handler(error, send)
      } else {
        diagnostics(EffectFailure(error: error, fileID: fileID, line: line))
      }
    }
  }
}
