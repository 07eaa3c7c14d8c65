/// The effects one dispatch started, to wait for them.
///
/// ```swift
/// try await core.dispatch(.refresh).finish()  // the refresh effect and its follow-ups are done
/// ```
public struct EffectHandle: Sendable {
  private let lineage: Lineage?

  @usableFromInline
  init(lineage: Lineage?) {
    self.lineage = lineage
  }

  /// Waits until the effects the action started have finished, along with
  /// the actions they sent and the effects those started, transitively.
  ///
  /// Returns at once if the action started none. Returns early if the
  /// waiting task is cancelled.
  ///
  /// - Important: An effect must not await the handle of the dispatch that
  ///   started it: it would wait for itself.
  public func finish() async {
    await lineage?.waitUntilZero()
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
