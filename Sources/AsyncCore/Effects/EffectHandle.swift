/// The effects one dispatch started, to wait for them or cancel them.
///
/// ```swift
/// try await core.dispatch(.refresh).finish()  // the refresh effect and its follow-ups are done
/// ```
///
/// A handle covers the dispatch's *lineage*: the effects its action (and the
/// `.send`s reduced with it) started, the actions those effects sent, the
/// effects those actions started, and so on.
public struct EffectHandle: Sendable {
  private let lineage: Lineage?

  @usableFromInline
  init(lineage: Lineage?) {
    self.lineage = lineage
  }

  /// The handle of an action that started no effect: finished. `package`:
  /// a test core's replay, which starts none, holds one.
  package static var none: EffectHandle { EffectHandle(lineage: nil) }

  /// Waits until the effects the action started have finished, along with
  /// the actions they sent and the effects those started, transitively.
  ///
  /// ```swift
  /// let handle = try await core.dispatch(.refresh)
  /// try await handle.finish()
  /// #expect(await core.state.isLoaded)
  /// ```
  ///
  /// Returns at once if the action started none, or if everything has
  /// finished, even when the waiting task is cancelled.
  ///
  /// - Throws: `CancellationError` if the waiting task was cancelled before
  ///   everything finished: the effects go on; the caller stopped waiting.
  /// - Important: An effect must not await the handle of the dispatch that
  ///   started it: it would wait for itself.
  public func finish() async throws(CancellationError) {
    guard let lineage, await !lineage.waitUntilZero() else { return }
    throw CancellationError()
  }

  /// Cancels every effect this handle covers that is still in flight
  /// (queued or running), as ``Effect/cancel(id:)`` would, and the effects
  /// that actions they already sent will start.
  ///
  /// ```swift
  /// let upload = try await core.dispatch(.upload(file))
  /// // the user taps "Stop":
  /// upload.cancel()
  /// try await upload.finish()   // returns once the cancelled effects have ended
  /// ```
  ///
  /// Exactly what it cancels: the dispatch's effects and every effect in its
  /// lineage (started by an action one of those effects sent, and so on),
  /// including ones a follow-up action already accepted starts after this
  /// call (they never run their body). What the cancelled effects send from
  /// now on is refused (their `send` returns
  /// ``SendResult/effectCancelled``); an action they sent before is still
  /// reduced. Effects of other dispatches, and effects started by
  /// ``Core/send(_:)``, are not touched. Calling it again, or after
  /// everything finished, does nothing.
  ///
  /// - Important: Cancellation is cooperative: an effect ends when its
  ///   operation notices (a `sleep` throws, `Task.isCancelled`). Await
  ///   ``finish()`` to know they have ended. Called from one of the effects
  ///   it covers, it cancels that effect too.
  public func cancel() {
    lineage?.cancel()
  }

  /// Whether everything ``finish()`` waits for is done. After
  /// ``Core/shutdown(_:)`` returns (called from outside the core's effects),
  /// it is `true` for every handle of that core.
  ///
  /// ```swift
  /// let handle = try await core.dispatch(.refresh)
  /// await core.shutdown(.immediate)
  /// assert(handle.isFinished)
  /// ```
  public var isFinished: Bool {
    lineage?.isZero ?? true
  }
}
