/// The effects the current task runs inside, innermost first: each effect
/// job is its task's scope while it runs (linked to the scope it started
/// in through `parent`), and is inherited by the tasks it starts (merged
/// parts, and unstructured `Task {}`s it creates).
///
/// It is how a core recognises a call that comes from one of its own
/// effects: `shutdown()` and `waitUntilIdle()` do not wait for the effects
/// they are called from (they would wait for themselves), and
/// `cancelInFlight` never cancels the effect it is nested in.
@usableFromInline
enum EffectScope {
  @TaskLocal static var current: EffectJob?

  /// The tokens of `registry`'s effects the current task runs inside.
  @usableFromInline
  static func enclosingTokens(in registry: EffectRegistry) -> [Int] {
    var tokens: [Int] = []
    var scope = current
    while let this = scope {
      if this.registry === registry { tokens.append(this.token) }
      scope = this.parent
    }
    return tokens
  }
}
