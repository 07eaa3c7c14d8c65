import Synchronization

/// What a core's running effects need from it, without referring to it (a
/// running effect must not keep a released core alive). One per core,
/// shared by every job.
@usableFromInline
final class EffectContext<Action: Sendable>: Sendable {
  @usableFromInline let registry: EffectRegistry
  @usableFromInline let queue: EffectQueue
  @usableFromInline let diagnostics: @Sendable (EffectFailure) -> Void
  /// Queues a follow-up in a lineage; `false` if the core refused it or is gone.
  @usableFromInline let accept: @Sendable (Action, Lineage?) -> Bool
  @usableFromInline let clock: any Clock<Duration>
  /// The core's dependencies when this context was made: a core makes a
  /// new context when they change, so effects started earlier keep theirs.
  @usableFromInline let dependencies: Dependencies

  init(
    registry: EffectRegistry,
    queue: EffectQueue,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void,
    accept: @escaping @Sendable (Action, Lineage?) -> Bool,
    clock: any Clock<Duration>,
    dependencies: Dependencies
  ) {
    self.registry = registry
    self.queue = queue
    self.diagnostics = diagnostics
    self.accept = accept
    self.clock = clock
    self.dependencies = dependencies
  }

  /// Registers `effect` as a job of its own in `lineage` (so `cancel(id:)`
  /// reaches it even before it starts), or reports it if the core refuses
  /// effects.
  @inlinable
  func makeJob(
    for effect: Effect<Action>, startedBy origin: Action, ids: [CancelID], lineage: Lineage?, priority: UInt8?
  ) -> EffectJob? {
    if case .run(let run) = effect.operation {
      return makeJob(for: run, startedBy: origin, ids: ids, lineage: lineage, priority: priority)
    }
    guard let token = registry.register(ids: ids, lineage: lineage) else {
      reportRefused(effect)
      return nil
    }
    return CompositeEffectJob(
      token: token, effect: effect, origin: origin, context: self, lineage: lineage, priority: priority)
  }

  /// `makeJob(for:…)` for a lone `.run`, given its `Run`: the core's path
  /// for most effects, which copies no `Effect`.
  @inlinable
  func makeJob(
    for run: Effect<Action>.Run, startedBy origin: Action, ids: [CancelID], lineage: Lineage?, priority: UInt8?
  ) -> EffectJob? {
    guard let token = registry.register(ids: ids, lineage: lineage) else {
      reportRefused(at: run.fileID, line: run.line)
      return nil
    }
    return RunEffectJob(token: token, run: run, origin: origin, context: self, lineage: lineage, priority: priority)
  }

  /// An effect the core refused to start: reported where it was made, not
  /// silently dropped.
  @usableFromInline
  func reportRefused(at fileID: StaticString, line: UInt) {
    diagnostics(EffectFailure(error: CoreDiagnostic.effectRefused, fileID: fileID, line: line))
  }

  @usableFromInline
  func reportRefused(_ effect: Effect<Action>) {
    let location = effect.location ?? (#fileID, #line)
    reportRefused(at: location.fileID, line: location.line)
  }
}

/// An effect job for a core with actions of type `Action`. Its work is made
/// where `Action` is known (`@inlinable`), so it runs specialised.
@usableFromInline
class ActionEffectJob<Action: Sendable>: EffectJob, @unchecked Sendable {
  // Safety: the properties added here are immutable and Sendable (the
  // flag is an atomic); the mutable fields are `EffectJob`'s, whose proof
  // is there.
  @usableFromInline let context: EffectContext<Action>
  /// The action whose reduction started the effect, for the report of a
  /// refused send.
  @usableFromInline let origin: Action
  /// Whether a refused send of this effect's `Send` has been reported: only
  /// the first is (each `EffectPart` has its own flag).
  let hasReportedRefusal = Atomic<Bool>(false)

  @inlinable
  init(
    token: Int, origin: Action, context: EffectContext<Action>, lineage: Lineage?, priority: UInt8?,
    work: @escaping @Sendable (EffectJob) async -> Void
  ) {
    self.context = context
    self.origin = origin
    super.init(token: token, registry: context.registry, lineage: lineage, priority: priority, work: work)
  }

  /// Where the effect was made, for reports (each kind of job knows).
  var location: (fileID: StaticString, line: UInt) {
    (#fileID, #line)
  }

  /// This effect's `Send`: accepted only while the effect is live (neither
  /// cancelled nor finished), whichever task calls it.
  @inlinable
  var send: Send<Action> {
    // The closure captures only the job: its context is the job itself,
    // not a new allocation.
    Send<Action>(dependencies: context.dependencies, clock: context.clock) { [self] action in deliver(action) }
  }

  /// The `Send` of `part`, a `.run` this job runs among others: refused
  /// once that part has returned, as well as when the job is.
  @inlinable
  func send(from part: EffectPart) -> Send<Action> {
    Send<Action>(dependencies: context.dependencies, clock: context.clock) { [self] action in
      guard !part.isEnded else {
        reportRefusal(of: action, reason: .effectEnded, by: part)
        return .effectEnded
      }
      return deliver(action, by: part)
    }
  }

  @inlinable
  func deliver(_ action: Action, by part: EffectPart? = nil) -> SendResult {
    if registry.isLive(token) && context.accept(action, lineage) { return .accepted }
    return refuse(action, by: part)
  }

  /// A send refused by the registry or the core: reported, and answered
  /// with why.
  @usableFromInline
  func refuse(_ action: Action, by part: EffectPart?) -> SendResult {
    let reason = registry.refusal(of: token)
    reportRefusal(of: action, reason: reason, by: part)
    return SendResult(refusedBecause: reason)
  }

  /// Tells the diagnostics handler that `action` was refused, the first
  /// time this effect (or `part`) has one refused: effects rarely read
  /// `send`'s result, so the action would otherwise vanish without a trace.
  @usableFromInline
  func reportRefusal(of action: Action, reason: CoreDiagnostic.RefusalReason, by part: EffectPart?) {
    let isFirst = part?.claimsRefusalReport() ?? !hasReportedRefusal.exchange(true, ordering: .relaxed)
    guard isFirst else { return }
    let (fileID, line) = part.map { ($0.fileID, $0.line) } ?? location
    context.diagnostics(
      EffectFailure(
        error: CoreDiagnostic.sendRefused(action: action, startedBy: origin, reason: reason), fileID: fileID,
        line: line))
  }
}

/// A job for a lone `.run`, the common case: it holds the `Run` alone, so
/// it copies no `Effect`, and runs through a small function (the frame of
/// `Effect.perform`, sized for every kind of effect, would overflow a child
/// task's first stack slab into a `malloc`).
@usableFromInline
final class RunEffectJob<Action: Sendable>: ActionEffectJob<Action>, @unchecked Sendable {
  // Safety: as `ActionEffectJob`; `run` is immutable and Sendable.
  @usableFromInline let run: Effect<Action>.Run

  @inlinable
  init(
    token: Int, run: Effect<Action>.Run, origin: Action, context: EffectContext<Action>, lineage: Lineage?,
    priority: UInt8?
  ) {
    self.run = run
    // A closure with no captures: no allocation, and specialised with the
    // code that makes the job.
    super.init(token: token, origin: origin, context: context, lineage: lineage, priority: priority) { job in
      let job = unsafeDowncast(job, to: RunEffectJob<Action>.self)
      await job.run.perform(send: job.send, diagnostics: job.context.diagnostics)
    }
  }

  override var location: (fileID: StaticString, line: UInt) {
    (run.fileID, run.line)
  }
}

/// A job for any other effect that needs a task (a `.concatenate` or a
/// `.merge` with a `.run` in it).
@usableFromInline
final class CompositeEffectJob<Action: Sendable>: ActionEffectJob<Action>, @unchecked Sendable {
  // Safety: as `ActionEffectJob`; `effect` is immutable and Sendable.
  @usableFromInline let effect: Effect<Action>

  @inlinable
  init(
    token: Int, effect: Effect<Action>, origin: Action, context: EffectContext<Action>, lineage: Lineage?,
    priority: UInt8?
  ) {
    self.effect = effect
    super.init(token: token, origin: origin, context: context, lineage: lineage, priority: priority) { job in
      let job = unsafeDowncast(job, to: CompositeEffectJob<Action>.self)
      await job.effect.perform(in: job)
    }
  }

  override var location: (fileID: StaticString, line: UInt) {
    // Every effect that needs a task has a `.run`, which knows.
    effect.location ?? super.location
  }
}

extension Effect {
  /// Runs this effect in `job`'s task. Merged and cancellable parts run as
  /// child jobs with tokens of their own, so cancelling an id stops that
  /// part, not its parent; each `.run` gets a `Send` valid until it returns.
  @inlinable
  func perform(in job: ActionEffectJob<Action>) async {
    let context = job.context
    switch operation {
    case .none:
      return
    case .send(let action):
      await job.send(action)
    case .run(let run):
      let part = EffectPart(fileID: run.fileID, line: run.line)
      await run.perform(send: job.send(from: part), diagnostics: context.diagnostics)
      part.end()
    case .merge(let effects):
      // Sends and cancels need no task of their own.
      for effect in effects where effect.isSynchronous {
        await effect.perform(in: job)
      }
      let jobs = effects.lazy.filter { !$0.isSynchronous }.compactMap {
        context.makeJob(for: $0, startedBy: job.origin, ids: [], lineage: job.lineage, priority: nil)
      }
      await withDiscardingTaskGroup { group in
        for job in jobs { group.addTask { await job.run() } }
      }
    case .concatenate(let effects):
      for effect in effects {
        guard !Task.isCancelled else { return }
        await effect.perform(in: job)
      }
    case .cancel(let id):
      // An explicit cancel: it may end the effect it is part of.
      context.registry.cancel(id: id, sparing: [])
    case .report(let report):
      context.diagnostics(report.failure)
    case .cancellable(let id, let cancelInFlight, let effect):
      // Never the effect this part is nested in (wrapped twice in the same
      // id, directly or through a child feature): only the newest runs.
      if cancelInFlight {
        context.registry.cancel(id: id, sparing: EffectScope.enclosingTokens(in: context.registry))
      }
      guard
        let child = context.makeJob(
          for: effect, startedBy: job.origin, ids: [id], lineage: job.lineage, priority: nil)
      else { return }
      await withDiscardingTaskGroup { group in
        group.addTask { await child.run() }
      }
    }
  }
}

/// One `.run` of an effect made of parts (a `.concatenate`), run in its
/// job's task: its `Send` is refused once the part has returned, even
/// while the parts after it run, and a refusal names the part's place.
@usableFromInline
final class EffectPart: Sendable {
  @usableFromInline let fileID: StaticString
  @usableFromInline let line: UInt
  private let hasEnded = Atomic<Bool>(false)
  /// Whether a refused send of this part has been reported: only the
  /// first is, so a `Send` leaked by one part cannot hide another's.
  private let hasReportedRefusal = Atomic<Bool>(false)

  @usableFromInline
  init(fileID: StaticString, line: UInt) {
    self.fileID = fileID
    self.line = line
  }

  /// Whether the part's operation (and its `catch:` handler) has returned.
  @usableFromInline
  var isEnded: Bool {
    hasEnded.load(ordering: .acquiring)
  }

  @usableFromInline
  func end() {
    hasEnded.store(true, ordering: .releasing)
  }

  /// `true` the first time only: the part's one refused send to report.
  @usableFromInline
  func claimsRefusalReport() -> Bool {
    !hasReportedRefusal.exchange(true, ordering: .relaxed)
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
