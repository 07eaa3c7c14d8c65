/// The errors a ``Core`` throws, each one a condition its caller can act on.
///
/// ```swift
/// do {
///   try await core.dispatch(.save)
/// } catch .shutDown {
///   // The core stopped accepting actions; `.save` was not reduced.
/// }
/// ```
public enum CoreError: Error, Sendable {
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

  /// The task was cancelled while ``Core/enqueue(_:)`` waited for room; the
  /// action was not queued.
  ///
  /// ```swift
  /// do { try await core.enqueue(.handle(request)) } catch .cancelled { return }
  /// ```
  case cancelled

  /// The core's journal failed (see ``CoreJournal``); the error is the
  /// journal's own.
  ///
  /// From ``Core/dispatch(_:)``: the action was not journaled and not
  /// reduced, because the journal refused it (it cannot be encoded) or
  /// the journal failed, and then the core has shut down. From opening a
  /// core on a journal: the journal could not be recovered, and no core
  /// was made.
  ///
  /// ```swift
  /// do {
  ///   try await orders.dispatch(.place(order))
  /// } catch .journal(let error) {
  ///   print("not on disk, not reduced: \(error)")
  /// }
  /// ```
  case journal(any Error)
}

extension CoreError: Equatable {
  /// Whether two errors are the same case; two journal errors are equal
  /// when they are of one `Equatable` type and equal.
  ///
  /// ```swift
  /// #expect(CoreError.shutDown == .shutDown)
  /// ```
  public static func == (lhs: CoreError, rhs: CoreError) -> Bool {
    switch (lhs, rhs) {
    case (.shutDown, .shutDown), (.alreadyRunning, .alreadyRunning), (.childRemoved, .childRemoved),
      (.cancelled, .cancelled):
      true
    case (.journal(let left), .journal(let right)):
      Self.equal(left, right)
    default:
      false
    }
  }

  private static func equal(_ left: any Error, _ right: any Error) -> Bool {
    guard let left = left as? any Equatable else { return false }
    return left.isEqual(to: right)
  }
}

extension Equatable {
  fileprivate func isEqual(to other: Any) -> Bool {
    guard let other = other as? Self else { return false }
    return self == other
  }
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
    case .cancelled: "the task was cancelled while it waited for room in the mailbox"
    case .journal(let error): "the core's journal failed: \(error)"
    }
  }
}
