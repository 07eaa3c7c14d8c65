// Placing child reducers in a parent: a fixed child over a key path, an
// optional child, and the elements of a collection by id.
extension Reduce {
  /// A reducer that runs `child` on the part of the state at `state`, for
  /// the actions `action` extracts, and lifts its effects into the parent's
  /// actions.
  ///
  /// ```swift
  /// let app = Reduce<App, AppAction>.combine(
  ///   .scope(state: \.counter, action: AppAction.counterCase, child: counter),
  ///   .scope(state: \.settings, action: AppAction.settingsCase, child: settings)
  /// )
  /// ```
  ///
  /// The child's cancel ids are its own: `.cancel(id: "load")` in the
  /// counter never cancels the settings' `"load"`, nor the parent's.
  ///
  /// - Parameters:
  ///   - state: Where the child's state is.
  ///   - action: The parent's case that carries the child's actions.
  ///   - dependencies: Changes the dependencies the child's effects see:
  ///     set a key to override it for the child, remove one to narrow what
  ///     the child can reach. By default the child sees the core's.
  ///   - child: The child's reducer.
  public static func scope<ChildState, ChildAction>(
    state: WritableKeyPath<State, ChildState> & Sendable,
    action: ActionCase<Action, ChildAction>,
    dependencies: (@Sendable (inout Dependencies) -> Void)? = nil,
    child: Reduce<ChildState, ChildAction>
  ) -> Reduce {
    let step = ScopeStep.fixed(state)
    return Reduce { parent, parentAction in
      guard let childAction = action.extract(parentAction) else { return .none }
      return child.body(&parent[keyPath: state], childAction)
        .lifted(through: step, embed: action.embed, dependencies: dependencies)
    }
  }

  /// This reducer, with `child` run on the optional state at `state` while
  /// it is there.
  ///
  /// ```swift
  /// let app = appLogic.ifLet(\.detail, action: AppAction.detailCase, then: detail)
  /// ```
  ///
  /// For an action `action` extracts, the child runs first, then this
  /// reducer (which may set the child to `nil` in response). When the child
  /// goes from present to `nil`, or, for an `Identifiable` child state, is
  /// replaced by one with another `id`:
  /// - its running effects are cancelled;
  /// - loops observing it through a ``ScopedCore`` end after its last value;
  /// - its scoped handles refuse further actions.
  ///
  /// - Important: Only this reducer's changes are watched: set the child to
  ///   `nil` here (in the reducer `ifLet` is called on), not in a reducer
  ///   combined after it, or its effects are never cancelled. A child state
  ///   that is not `Identifiable` and is replaced by another in one action
  ///   is the same child: make it `Identifiable` to tell them apart.
  ///
  /// A child action that arrives while the child is `nil` is not reduced;
  /// the core's diagnostics handler gets an ``EffectFailure`` whose error is
  /// ``ChildNotFound``, at `fileID` and `line`.
  ///
  /// - Parameters:
  ///   - state: Where the optional child state is.
  ///   - action: The parent's case that carries the child's actions.
  ///   - dependencies: Changes the dependencies the child's effects see; see
  ///     ``scope(state:action:dependencies:child:)``.
  ///   - child: The child's reducer.
  public func ifLet<ChildState, ChildAction>(
    _ state: WritableKeyPath<State, ChildState?> & Sendable,
    action: ActionCase<Action, ChildAction>,
    dependencies: (@Sendable (inout Dependencies) -> Void)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    then child: Reduce<ChildState, ChildAction>
  ) -> Reduce {
    let parent = body
    let step = ScopeStep.optional(state)
    return Reduce { root, rootAction in
      var childEffect = Effect<Action>.none
      if let childAction = action.extract(rootAction) {
        if root[keyPath: state] != nil {
          childEffect = child.body(&root[keyPath: state]!, childAction)
            .lifted(through: step, embed: action.embed, dependencies: dependencies)
        } else {
          childEffect = .reportMissingChild(rootAction, child: "\(state)", fileID: fileID, line: line)
        }
      }
      let before = root[keyPath: state].map(Self.identity)
      let parentEffect = parent(&root, rootAction)
      let ending =
        before != nil && root[keyPath: state].map(Self.identity) != before
        ? Effect<Action>.endingChild(at: step) : .none
      return .merge(childEffect, parentEffect, ending)
    }
  }

  /// This reducer, with `element` run on each element of the collection at
  /// `state`, by the element's id.
  ///
  /// ```swift
  /// let list = listLogic.forEach(\.rows, action: ListAction.rowCase, element: row)
  /// ```
  ///
  /// For an action `action` extracts, the element with its id runs first,
  /// then this reducer (which may remove the element in response). When an
  /// element's id leaves the collection:
  /// - its running effects are cancelled;
  /// - loops observing it through a ``ScopedCore`` end after its last value;
  /// - its scoped handles refuse further actions.
  ///
  /// Each element's cancel ids are its own: two rows' `"load"` effects are
  /// distinct. An action for an id that is not in the collection is not
  /// reduced; the core's diagnostics handler gets an ``EffectFailure``
  /// whose error is ``ChildNotFound``, at `fileID` and `line`.
  ///
  /// - Complexity: Finding an element is O(n), and after each action the
  ///   ids are compared with those before it, O(n) (with no allocation when
  ///   they are the same).
  public func forEach<Elements, ElementAction>(
    _ state: WritableKeyPath<State, Elements> & Sendable,
    action: ActionCase<Action, (Elements.Element.ID, ElementAction)>,
    dependencies: (@Sendable (inout Dependencies) -> Void)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    element: Reduce<Elements.Element, ElementAction>
  ) -> Reduce
  where
    Elements: MutableCollection & RandomAccessCollection & SendableMetatype, Elements.Element: Identifiable,
    Elements.Element.ID: Sendable
  {
    let parent = body
    return Reduce { root, rootAction in
      var childEffect = Effect<Action>.none
      if let (id, elementAction) = action.extract(rootAction) {
        if let index = Self.index(of: id, in: root[keyPath: state]) {
          childEffect = element.body(&root[keyPath: state][index], elementAction)
            .lifted(through: .element(state, id: id), embed: { action.embed((id, $0)) }, dependencies: dependencies)
        } else {
          childEffect = .reportMissingChild(rootAction, child: "\(state)[id: \(id)]", fileID: fileID, line: line)
        }
      }
      // Taken after the element ran (it changes the collection in place),
      // before the parent: a copy only if the parent changes it.
      let before = root[keyPath: state]
      let parentEffect = parent(&root, rootAction)
      let removed = Self.ids(in: before, missingFrom: root[keyPath: state])
      guard !removed.isEmpty else { return .merge(childEffect, parentEffect) }
      let endings = removed.map { Effect<Action>.endingChild(at: .element(state, id: $0)) }
      return .merge([childEffect, parentEffect] + endings)
    }
  }

  /// What tells one optional child from the next: its `id` when its type is
  /// `Identifiable`; otherwise every child is the same one while present.
  static func identity(_ child: some Any) -> AnyHashable {
    guard let identifiable = child as? any Identifiable else { return AnyHashable(true) }
    return id(of: identifiable)
  }

  static func id<Child: Identifiable>(of child: Child) -> AnyHashable { AnyHashable(child.id) }

  /// The position of the element with `id`, the first if several have it.
  static func index<Elements: Collection>(
    of id: Elements.Element.ID, in elements: Elements
  ) -> Elements.Index? where Elements.Element: Identifiable {
    var index = elements.startIndex
    while index != elements.endIndex {
      if elements[index].id == id { return index }
      elements.formIndex(after: &index)
    }
    return nil
  }

  /// The ids of `before`'s elements that `after` no longer has.
  static func ids<Elements: Collection>(
    in before: Elements, missingFrom after: Elements
  ) -> [Elements.Element.ID] where Elements.Element: Identifiable {
    if before.count == after.count, zip(before, after).allSatisfy({ $0.id == $1.id }) { return [] }
    let kept = Set(after.lazy.map(\.id))
    return before.lazy.map(\.id).filter { !kept.contains($0) }
  }
}
