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
/// `forEach`). For a child inside other children, ``child`` and ``action``
/// are seen from the core's state: the whole path from the root, and the
/// action the core reduced.
public struct ChildNotFound: Error, Sendable, CustomStringConvertible {
  /// The action the core reduced, which carried the child action: for a
  /// child inside other children, the root action that carried it down.
  ///
  /// ```swift
  /// if let missing = failure.error as? ChildNotFound, let action = missing.action as? TodosAction {
  ///   logger.notice("not reduced: \(String(describing: action))")
  /// }
  /// ```
  public let action: any Sendable
  /// Where the child was, from the root of the core's state: its key path,
  /// with each element's id (escaped, cut after 40 bytes) and a `?` after each
  /// optional child it is inside.
  ///
  /// ```swift
  /// if let missing = failure.error as? ChildNotFound {
  ///   print(missing.child)   // \Library.sections[id: a].rows[id: 3]
  /// }
  /// ```
  public var child: String { path.text }

  /// The child's place, from the reducer that found it missing up to the
  /// one its effect has been lifted through so far.
  let path: ScopePath

  init(action: any Sendable, path: ScopePath) {
    self.action = action
    self.path = path
  }

  /// A sentence naming the child and the action, for a log: one line, the
  /// action's text escaped and cut after 200 bytes.
  ///
  /// ```swift
  /// print(missing)   // one line:
  /// // an action for \Todos.rows[id: 3], which is not in the state, was not reduced:
  /// // row(id: 3, action: App.RowAction.toggle)
  /// ```
  public var description: String {
    "an action for \(child), which is not in the state, was not reduced: \(RefusedSend.render(action))"
  }

  /// This error as the parent that placed the reducer reporting it sees
  /// it: `step` in front of the path, and the action embedded in the
  /// parent's.
  func lifted(through step: ScopeStep, embed: (any Sendable) -> (any Sendable)?) -> ChildNotFound {
    ChildNotFound(action: embed(action) ?? action, path: path.prepending(step))
  }
}

extension Effect {
  /// Reports `action`, addressed to the missing child at `step`, with the
  /// place the child was placed.
  @usableFromInline
  static func reportMissingChild(_ action: Action, at step: ScopeStep, fileID: StaticString, line: UInt) -> Effect {
    let missing = ChildNotFound(action: action, path: ScopePath(steps: [step]))
    return Effect(.report(EffectFailure(error: missing, fileID: fileID, line: line)))
  }
}
