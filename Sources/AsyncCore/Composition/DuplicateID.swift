/// The error a core's diagnostics handler receives, inside an
/// ``EffectFailure``, when a `forEach`'s collection comes to hold two
/// elements with one id. ``EffectFailure/fileID`` and
/// ``EffectFailure/line`` give where the `forEach` was placed.
///
/// ```swift
/// let core = Core(initialState: Todos(), diagnostics: { failure in
///   if let duplicate = failure.error as? DuplicateID {
///     logger.fault("\(duplicate)")   // two rows with the id 3
///   }
/// }, reducer: todos)
/// ```
///
/// An element is its id (see
/// ``Reduce/forEach(_:action:dependencies:fileID:line:element:)``), so
/// while two elements share one, actions for it reach the first of them
/// (a handle on it may read either: it keeps to the one it found last),
/// and removing either ends the child with that id: its
/// effects are cancelled and its handles end, and an element left with
/// that id is a new child. The state is not changed: the duplicate is a
/// bug to fix where the elements are made.
///
/// Reported once each time an id comes to be held by more than one
/// element, at the action after which it is (not again while it stays so),
/// when the reducer `forEach` was called on, or an element giving itself
/// another id, made it so. Duplicates in the initial state, or made by a
/// reducer combined beside `forEach`, are not seen.
public struct DuplicateID: Error, Sendable, CustomStringConvertible {
  /// The id several elements have, as text (escaped, and cut after 40 bytes).
  ///
  /// ```swift
  /// if let duplicate = failure.error as? DuplicateID {
  ///   print(duplicate.id)   // 3
  /// }
  /// ```
  public let id: String
  /// The collection, from the root of the core's state: its key path, with
  /// the id of each element it is inside.
  ///
  /// ```swift
  /// if let duplicate = failure.error as? DuplicateID {
  ///   print(duplicate.collection)   // \Library.sections[id: a].rows
  /// }
  /// ```
  public var collection: String { path.text }

  /// The collection's place, from the reducer that found the duplicate up
  /// to the one its effect has been lifted through so far.
  let path: ScopePath

  init(id: String, path: ScopePath) {
    self.id = id
    self.path = path
  }

  /// A sentence naming the collection and the id, for a log.
  ///
  /// ```swift
  /// print(duplicate)
  /// // more than one element of \Todos.rows has the id 3: actions for it reach the first
  /// ```
  public var description: String {
    "more than one element of \(collection) has the id \(id): actions for it reach the first"
  }

  /// This error as the parent that placed the reducer reporting it sees
  /// it: `step` in front of the path.
  func lifted(through step: ScopeStep) -> DuplicateID {
    DuplicateID(id: id, path: path.prepending(step))
  }
}

extension Effect {
  /// Reports that more than one element of the collection at `keyPath`
  /// has `id`, with the place of the `forEach`.
  @usableFromInline
  static func reportDuplicate(
    _ id: some Hashable & Sendable, in keyPath: AnyKeyPath, fileID: StaticString, line: UInt
  ) -> Effect {
    let duplicate = DuplicateID(id: ScopePath.bounded(id), path: ScopePath(steps: [.fixed(keyPath)]))
    return Effect(.report(EffectFailure(error: duplicate, fileID: fileID, line: line)))
  }
}
