/// One effect that needs a task: registered with its core (a token, so
/// `cancel(id:)` reaches it even before it starts), waiting in the queue
/// for the runner, then run as a child task. While it runs it is also the
/// scope of that task (see `EffectScope`).
///
/// One allocation per effect: the job is also the effect's scope, and its
/// `Send` and its work are closures whose only context is the job.
@usableFromInline
class EffectJob: @unchecked Sendable {
  // Safety: every stored property is immutable and Sendable except
  // `parent`. `parent` is written once, by the job's own task in `run()`,
  // before the job becomes that task's `EffectScope.current`; it is read
  // only by walking a scope chain from `EffectScope.current`, that is by
  // that task or by tasks it creates afterwards (creating a task orders the
  // write before everything the new task does). Subclasses add only
  // immutable Sendable properties.
  @usableFromInline let token: Int
  @usableFromInline let registry: EffectRegistry
  /// The dispatch the effect belongs to, if anyone can wait for it.
  @usableFromInline let lineage: Lineage?
  /// The child task's priority, as `TaskPriority.rawValue` (see `Effect.Run`).
  let priority: UInt8?
  /// The work, given this job: made where the action type is known.
  let work: @Sendable (EffectJob) async -> Void
  /// The scope the job's task runs inside, set by `run()`.
  var parent: EffectJob?

  @usableFromInline
  init(
    token: Int, registry: EffectRegistry, lineage: Lineage?, priority: UInt8?,
    work: @escaping @Sendable (EffectJob) async -> Void
  ) {
    self.token = token
    self.registry = registry
    self.lineage = lineage
    self.priority = priority
    self.work = work
  }

  /// Runs the effect as the current (child) task, registered for
  /// cancellation while it runs and marked as its scope; skipped if it was
  /// cancelled before it began.
  @usableFromInline
  final func run() async {
    // The synchronous `withUnsafeCurrentTask`: the registry holds the task
    // until `finish` below, which this task calls (see `RunningTask`).
    let started = withUnsafeCurrentTask { task in task.map { registry.start(token, task: $0) } ?? false }
    if started {
      parent = EffectScope.current
      await EffectScope.$current.withValue(self) { await work(self) }
    }
    registry.finish(token, lineage: lineage)
  }

  /// Accounts for an effect that will never run (its core was released).
  final func abandon() {
    registry.finish(token, lineage: lineage)
  }
}

extension DiscardingTaskGroup {
  /// Adds `job` as a child task, at its priority.
  mutating func addTask(running job: EffectJob) {
    // Without a priority, no `TaskPriority?` is built (a resilient type:
    // building one goes through its metadata).
    if let priority = job.priority {
      addTask(priority: TaskPriority(rawValue: priority)) { await job.run() }
    } else {
      addTask { await job.run() }
    }
  }
}
