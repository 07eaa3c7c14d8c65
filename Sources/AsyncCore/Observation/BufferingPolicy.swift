/// How an observer that is slower than the core receives values.
///
/// ```swift
/// for await count in await core.observe(\.count) { … }                  // .latest
/// for await state in await core.states(buffering: .all) { log(state) }  // every state
/// ```
///
/// - Important: Neither policy ever drops the final value: when the core
///   shuts down or is released, an observer receives what it has not taken
///   yet and only then does its loop end.
public enum BufferingPolicy: Sendable, Hashable {
  /// Keep only the newest value. A slow observer skips intermediate values
  /// and always ends up holding the newest. Memory per observer is constant,
  /// and a busy observer never slows the core down. The default.
  ///
  /// ```swift
  /// for await state in await core.states(buffering: .latest) {
  ///   await render(state)   // slow: the loop skips to the newest state
  /// }
  /// ```
  case latest

  /// Keep every value, in order, none skipped. The buffer grows while the
  /// observer falls behind, so use it where every value matters (logging,
  /// replay, tests) and the consumer keeps up on average.
  ///
  /// ```swift
  /// for await count in await core.observe(\.count, buffering: .all) {
  ///   history.append(count)   // every count, in order
  /// }
  /// ```
  case all
}
