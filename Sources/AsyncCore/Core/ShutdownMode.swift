/// How ``Core/shutdown(_:)`` treats effects still running.
///
/// ```swift
/// await core.shutdown()             // .graceful, the default: effects run to their end
/// // or
/// await core.shutdown(.immediate)    // effects are cancelled; what they send is refused
/// ```
public enum ShutdownMode: Sendable, Hashable {
  /// Stop accepting actions from outside, let running effects finish (their
  /// follow-up actions are still reduced), then end observers. The default.
  ///
  /// - Important: An effect that never ends (a timer loop, say) keeps a
  ///   graceful shutdown waiting; cancel it first, or use ``immediate``.
  ///
  /// ```swift
  /// try await core.dispatch(.stopTimer)   // its reducer returns .cancel(id: TimerID())
  /// await core.shutdown()                 // .graceful: waits for the other effects
  /// ```
  case graceful

  /// Stop accepting any action, cancel every effect and wait for them to
  /// end, then end observers. What cancelled effects send is refused.
  ///
  /// ```swift
  /// await core.shutdown(.immediate)
  /// #expect(core.metrics.effectsInFlight == 0)
  /// ```
  case immediate
}
