/// How much a ``TestCore`` checks.
///
/// ```swift
/// let store = TestCore(initialState: App(), exhaustivity: .off, reducer: reduceApp)
/// await store.send(.launch)                      // no closure: nothing checked
/// await store.receive(.loaded) { $0.isLoading = false }  // only isLoading checked
/// ```
public enum Exhaustivity: Sendable, Hashable {
  /// Every state change, every action effects send and every effect's end
  /// must be asserted; anything left over fails the test at
  /// ``TestCore/finish(timeout:sourceLocation:)`` and when the test core goes
  /// away. The default.
  ///
  /// ```swift
  /// let store = TestCore(initialState: Counter(), reducer: counterReducer)  // .on
  /// await store.send(.increment) { $0.count = 1 }   // the whole state compared
  /// await store.finish()                            // anything left over fails the test
  /// ```
  case on

  /// Only what the test names is checked: a `send` or `receive` closure is
  /// applied to the actual state and only the fields it sets are compared,
  /// `receive` passes over actions that do not match, and leftover actions,
  /// state changes and running effects are not reported (`finish()` cancels
  /// the effects). Effects that throw are still reported, and so is a
  /// closure given for an action that changed nothing
  /// (``TestCoreFailure/closureChangedNothing``), as in TCA.
  ///
  /// ```swift
  /// let store = TestCore(initialState: App(), exhaustivity: .off, reducer: reduceApp)
  /// await store.send(.launch)
  /// await store.receive(.sessionLoaded) { $0.isSignedIn = true }   // only isSignedIn compared
  /// ```
  case off
}
