/// The errors a ``Core`` throws, each one a condition its caller can act on.
///
/// ```swift
/// do {
///   try await core.dispatch(.save)
/// } catch .shutDown {
///   // The core stopped accepting actions; `.save` was not reduced.
/// }
/// ```
public enum CoreError: Error, Sendable, Equatable {
  /// The core has shut down and no longer accepts actions. The action that
  /// got this error was not reduced.
  ///
  /// ```swift
  /// await core.shutdown()
  /// do {
  ///   try await core.dispatch(.increment)
  /// } catch .shutDown {
  ///   print("refused: the increment was not reduced")
  /// }
  /// ```
  case shutDown

  /// ``Core/run()`` was called while another call of it for the same core
  /// was in progress. One core is one service: run it from one task.
  ///
  /// ```swift
  /// let service = Task { try await core.run() }   // the one service task
  /// // … elsewhere, while it runs:
  /// do { try await core.run() } catch .alreadyRunning { print("already running") }
  /// ```
  case alreadyRunning

  /// The child a ``ScopedCore`` handle points at is no longer in the state:
  /// an optional child became `nil`, or an element left its collection. The
  /// action that got this error was not reduced; the handle is done.
  ///
  /// ```swift
  /// do {
  ///   try await detail.dispatch(.save)
  /// } catch .childRemoved {
  ///   print("the detail was closed first: nothing saved")
  /// }
  /// ```
  case childRemoved
}

extension CoreError: CustomStringConvertible {
  /// The error in one sentence, for a log.
  ///
  /// ```swift
  /// print(CoreError.shutDown)   // the core has shut down and accepts no more actions
  /// ```
  public var description: String {
    switch self {
    case .shutDown: "the core has shut down and accepts no more actions"
    case .alreadyRunning: "the core's run() is already in progress in another task"
    case .childRemoved: "the child the handle points at is no longer in the state"
    }
  }
}
