/// The effects the current task runs inside, innermost first: set by each
/// effect job around its work, and inherited by the tasks it starts (merged
/// parts, and unstructured `Task {}`s it creates).
///
/// It is how a core recognises a call that comes from one of its own
/// effects: `shutdown()` and `waitUntilIdle()` do not wait for the effects
/// they are called from (they would wait for themselves), and
/// `cancelInFlight` never cancels the effect it is nested in.
final class EffectScope: Sendable {
  @TaskLocal static var current: EffectScope?

  let registry: EffectRegistry
  let token: Int
  let parent: EffectScope?

  init(registry: EffectRegistry, token: Int, parent: EffectScope?) {
    self.registry = registry
    self.token = token
    self.parent = parent
  }

  /// The tokens of `registry`'s effects the current task runs inside.
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
