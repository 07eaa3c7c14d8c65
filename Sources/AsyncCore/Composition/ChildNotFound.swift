/// The error a core's diagnostics handler receives, inside an
/// ``EffectFailure``, for an action addressed to a child that is not in the
/// state: an optional child that is `nil`, or an element with no such id
/// (gone, or never there). The action was not reduced by the child; the
/// core goes on.
///
/// ```swift
/// let core = Core(initialState: Todos(), diagnostics: { failure in
///   if let missing = failure.error as? ChildNotFound {
///     logger.notice("\(missing)")   // a tap on a row that was just deleted
///   }
/// }, reducer: todos)
/// ```
///
/// It happens when an action was sent before the child was removed and
/// reduced after: a tap racing a delete, or an effect the removal cancelled
/// sending in the instant before. ``EffectFailure/fileID`` and
/// ``EffectFailure/line`` give where the child was placed (the `ifLet` or
/// `forEach`).
public struct ChildNotFound: Error, Sendable, CustomStringConvertible {
  /// The parent's action that carried the child action.
  ///
  /// ```swift
  /// if let missing = failure.error as? ChildNotFound, let action = missing.action as? TodosAction {
  ///   logger.notice("not reduced: \(String(describing: action))")
  /// }
  /// ```
  public let action: any Sendable
  /// Where the child was: its key path, with the element's id for an
  /// element.
  ///
  /// ```swift
  /// if let missing = failure.error as? ChildNotFound {
  ///   print(missing.child)   // \Todos.rows[id: 3]
  /// }
  /// ```
  public let child: String

  init(action: any Sendable, child: String) {
    self.action = action
    self.child = child
  }

  /// A sentence naming the child and the action, for a log.
  ///
  /// ```swift
  /// print(missing)   // one line:
  /// // an action for \Todos.rows[id: 3], which is not in the state, was not reduced:
  /// // row(id: 3, action: App.RowAction.toggle)
  /// ```
  public var description: String {
    "an action for \(child), which is not in the state, was not reduced: \(action)"
  }
}

extension Effect {
  /// Reports `action`, addressed to the missing child described by `child`,
  /// with the place the child was placed.
  @usableFromInline
  static func reportMissingChild(
    _ action: Action, child: @autoclosure () -> String, fileID: StaticString, line: UInt
  ) -> Effect {
    Effect(.report(EffectFailure(error: ChildNotFound(action: action, child: child()), fileID: fileID, line: line)))
  }
}
