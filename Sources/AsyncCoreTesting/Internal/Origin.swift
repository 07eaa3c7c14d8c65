import AsyncCore
import Testing

/// One `send` of a test core: what was sent, where, and the handle of the
/// effects it started (with everything they sent, transitively).
struct Origin {
  /// `send(.action)`.
  let step: String
  let sourceLocation: SourceLocation
  let effects: EffectHandle

  /// `send(.action) at File.swift:12`, as messages name it.
  var description: String {
    "\(step) at \(sourceLocation.fileName):\(sourceLocation.line)"
  }
}
