/// How ``Core/shutdown(_:)`` treats effects still running.
public enum ShutdownMode: Sendable, Hashable {
  /// Stop accepting actions from outside, let running effects finish (their
  /// follow-up actions are still reduced), then end observers. The default.
  ///
  /// - Important: An effect that never ends (a timer loop, say) keeps a
  ///   graceful shutdown waiting; cancel it first, or use ``immediate``.
  case graceful

  /// Stop accepting any action, cancel every effect and wait for them to
  /// end, then end observers. What cancelled effects send is refused.
  case immediate
}
