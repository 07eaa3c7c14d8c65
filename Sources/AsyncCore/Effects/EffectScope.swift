/// The effects the current task runs inside, innermost first (through
/// `parent`), inherited by the tasks it starts. How a core recognises a call
/// from its own effect: `shutdown()` and `waitUntilIdle()` must not wait for
/// themselves, and `cancelInFlight` spares the effect it is nested in.
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
