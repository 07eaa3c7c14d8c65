/// One effect that needs a task: registered with its core (so `cancel(id:)`
/// reaches it before it starts), queued for the runner, then run as a child
/// task whose `EffectScope` it is. One allocation per effect: its `Send` and
/// work are closures whose only context is the job.
@usableFromInline
class EffectJob: @unchecked Sendable {
  // Safety: every stored property is immutable and Sendable except
  // `parent` and `task`, both written only by the job's own task in
  // `run()` (through `registry.start` for `task`).
  // - `parent` is written once, before the job becomes that task's
  //   `EffectScope.current`; it is read only by walking a scope chain from
  //   `EffectScope.current`, that is by that task or by tasks it creates
  //   afterwards (creating a task orders the write before everything the
  //   new task does).
  // - `task` (not Sendable, and valid only while its task exists) is set
  //   before the registry's lock publishes the job as running, and cleared
  //   after `registry.finish` has removed it; other tasks read it only
  //   through the registry: under that lock while the job is registered as
  //   running, or after the lock while they hold a pin on the job (taken
  //   under the lock while it was running), which keeps `finish` from
  //   removing it until they unpin; so after the write and before the task
  //   can end. On it they call only `cancel()` and `isCancelled`, which set
  //   or read the task's atomic status, as other tasks may.
  // Subclasses add only immutable Sendable properties.
  @usableFromInline let token: Int
  @usableFromInline let registry: EffectRegistry
  /// The dispatch the effect belongs to, if anyone can wait for it.
  @usableFromInline let lineage: Lineage?
  /// The child task's priority, as `TaskPriority.rawValue` (see `Effect.Run`).
  let priority: UInt8?
  /// The work, given this job: made where the action type is known.
  let work: @Sendable (EffectJob) async -> Void
  // `@exclusivity(unchecked)`: by the proof above, no two accesses overlap,
  // and the dynamic check is a thread-local look-up per access.
  /// The scope the job's task runs inside, set by `run()`.
  @exclusivity(unchecked) var parent: EffectJob?
  /// The job's task while it runs, for cancellation.
  @exclusivity(unchecked) var task: UnsafeCurrentTask?

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
    // The synchronous `withUnsafeCurrentTask`: the job keeps the task until
    // `finish` below, which this task calls (see the Safety note).
    let started = withUnsafeCurrentTask { task in task.map { registry.start(token, job: self, task: $0) } ?? false }
    if started {
      parent = EffectScope.current
      await EffectScope.$current.withValue(self) { await work(self) }
    }
    if !registry.finish(token, lineage: lineage) {
      // Pinned: a canceller holds this task, or an end observer waits.
      await registry.finishOnceUnpinned(token, lineage: lineage)
    }
    // Set by `registry.start` even when the job was cancelled before it
    // began; no longer reachable through the registry either way.
    task = nil
  }

  /// Accounts for an effect that will never run (its core was released).
  final func abandon() {
    // Never started, so never pinned by a canceller.
    if !registry.finish(token, lineage: lineage) { programmerError("internal: an abandoned effect was pinned") }
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
