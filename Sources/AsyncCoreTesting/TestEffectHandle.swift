import AsyncCore
import Testing

/// The effects one ``TestCore/send(_:assert:sourceLocation:)`` started, and
/// everything they started in turn: a test ends or waits for them without
/// touching the others.
///
/// ```swift
/// let timer = await store.send(.startTimer) { $0.isTiming = true }   // never ends on its own
/// await store.send(.load) { $0.isLoading = true }
/// await timer.cancel()                       // the timer stops; the load runs on
/// await store.receive(.loaded(42)) {
///   $0.isLoading = false
///   $0.count = 42
/// }
/// await store.finish()
/// ```
///
/// `send` returns one for every action (it is discardable): for an action
/// whose effects all happen while it is reduced (`.none`, `.send`,
/// `.cancel`) it has nothing to wait for. It covers the effects the action
/// returned, the actions they send, and the effects those return.
///
/// Cancelling or finishing one `send`'s effects changes nothing else: what
/// they sent before ending is still to be received, and the test core's
/// ``TestCore/finish(timeout:sourceLocation:)`` still checks the other
/// `send`s' effects.
public struct TestEffectHandle: Sendable {
  let effects: EffectHandle
  /// `send(.action) at File.swift:12`, as messages name it.
  let origin: String
  /// The test core's ``TestCore/timeout`` when the action was sent.
  let timeout: Duration

  /// Whether every effect this `send` started has ended.
  ///
  /// ```swift
  /// let load = await store.send(.load) { $0.isLoading = true }
  /// await store.receive(.loaded(42)) {
  ///   $0.isLoading = false
  ///   $0.count = 42
  /// }
  /// #expect(load.isFinished)
  /// ```
  public var isFinished: Bool { effects.isFinished }

  /// Cancels this `send`'s effects and waits until they have ended: as a
  /// view's task ends when the view goes away, where no action of the
  /// feature cancels it.
  ///
  /// ```swift
  /// let appearance = await store.send(.appeared)   // listens for updates until cancelled
  /// await appearance.cancel()                      // the view went away
  /// await store.finish()                           // nothing left running
  /// ```
  ///
  /// An action an effect sent just before it was cancelled is still
  /// reduced, and must be received (or skipped) in exhaustive mode. An
  /// effect that has not ended `timeout` after its cancellation ignores
  /// cancellation: it is recorded at this call
  /// (``TestCoreFailure/effectIgnoredCancellation(origin:waited:)``).
  ///
  /// - Parameters:
  ///   - timeout: How long to wait, in real time, for the cancelled effects
  ///     to end; by default the test core's ``TestCore/timeout`` when the
  ///     action was sent. Returns as soon as they end.
  ///   - sourceLocation: Where a failure is recorded; leave the default.
  public nonisolated(nonsending) func cancel(
    timeout: Duration? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    guard !effects.isFinished else { return }
    let timeout = timeout ?? self.timeout
    effects.cancel()
    await Waiting.effects([effects], until: ContinuousClock.now.advanced(by: timeout))
    if !effects.isFinished {
      Issue.record(
        Comment(rawValue: TestCoreFailure.effectIgnoredCancellation(origin: origin, waited: timeout).description),
        sourceLocation: sourceLocation)
    }
  }

  /// Waits until this `send`'s effects have ended, and records an issue at
  /// this call if they have not within `timeout`.
  ///
  /// ```swift
  /// await store.send(.stopTimer).finish()   // its cleanup effect has ended
  /// ```
  ///
  /// Effects still running after `timeout` are recorded
  /// (``TestCoreFailure/effectsNotFinished(origin:waited:)``) and go on
  /// running: ``cancel(timeout:sourceLocation:)`` or the test core's
  /// ``TestCore/finish(timeout:sourceLocation:)`` ends them. Effects asleep
  /// on a `ManualClock` end only once the test advances it.
  ///
  /// - Parameters:
  ///   - timeout: How long to wait, in real time; by default the test
  ///     core's ``TestCore/timeout`` when the action was sent. A bound, not a
  ///     delay: returns as soon as the effects end.
  ///   - sourceLocation: Where a failure is recorded; leave the default.
  public nonisolated(nonsending) func finish(
    timeout: Duration? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    guard !effects.isFinished else { return }
    let timeout = timeout ?? self.timeout
    await Waiting.effects([effects], until: ContinuousClock.now.advanced(by: timeout))
    if !effects.isFinished {
      Issue.record(
        Comment(rawValue: TestCoreFailure.effectsNotFinished(origin: origin, waited: timeout).description),
        sourceLocation: sourceLocation)
    }
  }
}
