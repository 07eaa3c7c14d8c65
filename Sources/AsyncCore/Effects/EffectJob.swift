/// One effect waiting to become a child task of the core's runner.
struct EffectJob: Sendable {
  let token: Int
  let registry: EffectRegistry
  let priority: TaskPriority?
  let operation: @Sendable () async -> Void

  /// Runs the effect as the current (child) task, registered for
  /// cancellation while it runs and marked as its scope; skipped if it was
  /// cancelled before it began.
  func run() async {
    await withUnsafeCurrentTask { task in
      if let task, registry.start(token, task: task) {
        let scope = EffectScope(registry: registry, token: token, parent: EffectScope.current)
        await EffectScope.$current.withValue(scope) { await operation() }
      }
      registry.finish(token)
    }
  }

  /// Accounts for an effect that will never run (its core was released).
  func abandon() {
    registry.finish(token)
  }
}
