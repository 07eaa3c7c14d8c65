// Placing child reducers in a parent: a fixed child over a key path, an
// optional child, and the elements of a collection by id.
extension Reduce {
  /// A reducer that runs `child` on the part of the state at `state`, for
  /// the actions `action` extracts, and lifts its effects into the parent's
  /// actions.
  ///
  /// ```swift
  /// let app = Reduce<App, AppAction>.combine([
  ///   .scope(state: \.counter, action: AppAction.counterCase, child: counter),
  ///   .scope(state: \.settings, action: AppAction.settingsCase, child: settings),
  /// ])
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
  ///   - fileID: Where the child is placed, for the message when the
  ///     child reads a key its `dependencies:` removed; leave the default.
  ///   - line: The line of that place; leave the default.
  ///   - child: The child's reducer. A child that starts no effects leaves
  ///     the scope pure too (see ``Reduce/init(_:)-((State,Action)->Void)``).
  @inlinable
  public static func scope<ChildState, ChildAction>(
    state: WritableKeyPath<State, ChildState> & Sendable,
    action: ActionCase<Action, ChildAction>,
    dependencies: (@Sendable (inout Dependencies) -> Void)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    child: Reduce<ChildState, ChildAction>
  ) -> Reduce {
    let step = ScopeStep.fixed(state)
    let lens = StateLens(state)
    if case .pure(let reduce) = child.body {
      // A child that starts no effects has none to lift: the scope stays
      // pure, so a core still reduces on its pure fast path.
      return Reduce { parent, parentAction in
        guard let childAction = action.extract(parentAction) else { return }
        lens.modify(&parent) { reduce(&$0, childAction) }
      }
    }
    let childBody = child.effectfulBody
    return Reduce { parent, parentAction in
      guard let childAction = action.extract(parentAction) else { return .none }
      let effect = lens.modify(&parent) { childBody(&$0, childAction) }
      return effect.isNone
        ? .none
        : effect.lifted(through: step, embed: action.embed, dependencies: dependencies, fileID: fileID, line: line)
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
  ///   combined after it, or its effects are never cancelled. (Its handles
  ///   end whatever removed it: the core looks for their child after each
  ///   action.) A child state that is not `Identifiable` and is replaced by
  ///   another in one action is the same child: make it `Identifiable` to
  ///   tell them apart.
  ///
  /// A child action that arrives while the child is `nil` is not reduced;
  /// the core's diagnostics handler gets an ``EffectFailure`` whose error is
  /// ``CoreDiagnostic/childNotFound(child:action:)``, at `fileID` and `line`.
  ///
  /// - Parameters:
  ///   - state: Where the optional child state is.
  ///   - action: The parent's case that carries the child's actions.
  ///   - dependencies: Changes the dependencies the child's effects see; see
  ///     ``scope(state:action:dependencies:fileID:line:child:)``.
  ///   - fileID: Where the child is placed, for the ``EffectFailure`` of an
  ///     action that finds it `nil`; leave the default.
  ///   - line: The line where the child is placed; leave the default.
  ///   - child: The child's reducer.
  @inlinable
  public func ifLet<ChildState, ChildAction>(
    _ state: WritableKeyPath<State, ChildState?> & Sendable,
    action: ActionCase<Action, ChildAction>,
    dependencies: (@Sendable (inout Dependencies) -> Void)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    then child: Reduce<ChildState, ChildAction>
  ) -> Reduce {
    let parent = effectfulBody
    let childBody = child.effectfulBody
    let step = ScopeStep.optional(state)
    let lens = StateLens(state)
    let identity = ChildIdentity<ChildState>()
    return Reduce { root, rootAction in
      var childEffect = Effect<Action>.none
      // Read before the child runs: a child that gives itself another id
      // leaves too.
      let idBefore = identity.isIdentifiable ? lens.modify(&root) { identity.id(of: $0) } : nil
      if let childAction = action.extract(rootAction) {
        var found = false
        let effect = lens.modify(&root) { optional -> Effect<ChildAction> in
          guard optional != nil else { return .none }
          found = true
          return childBody(&optional!, childAction)
        }
        if !found {
          childEffect = .reportMissingChild(rootAction, at: step, fileID: fileID, line: line)
        } else if !effect.isNone {
          childEffect = effect.lifted(
            through: step, embed: action.embed, dependencies: dependencies, fileID: fileID, line: line)
        }
      }
      // Presence is read without copying the child; its id only for an
      // `Identifiable` one.
      guard idBefore != nil || lens.modify(&root, { $0 != nil }) else {
        return childEffect.merging(parent(&root, rootAction))
      }
      let effect = childEffect.merging(parent(&root, rootAction))
      let ended =
        !lens.modify(&root) { $0 != nil }
        || (identity.isIdentifiable && lens.modify(&root) { identity.id(of: $0) } != idBefore)
      return ended ? effect.merging(.endingChild(at: step)) : effect
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
  /// - Important: Only this reducer's changes are watched: remove elements
  ///   here (in the reducer `forEach` is called on), not in a reducer
  ///   combined after it, or their effects are never cancelled. (Their
  ///   handles end whatever removed them: the core looks for their element
  ///   after each action.) An element is its id: replaced by another value
  ///   with the same id, it is the same child, and its effects go on.
  ///
  /// Each element's cancel ids are its own: two rows' `"load"` effects are
  /// distinct. An action for an id that is not in the collection is not
  /// reduced; the core's diagnostics handler gets an ``EffectFailure``
  /// whose error is ``CoreDiagnostic/childNotFound(child:action:)``, at
  /// `fileID` and `line`.
  ///
  /// Ids must be unique. When this reducer (or an element) leaves two
  /// elements with one id, the diagnostics handler gets, once, an
  /// ``EffectFailure`` whose error is
  /// ``CoreDiagnostic/duplicateID(id:collection:)``, at `fileID` and `line`.
  /// Until it is fixed, actions for that id reach the first element with
  /// it, and removing either ends the child with that id, so a removed
  /// row's effect never lands on the row that kept the id.
  ///
  /// - Complexity: Finding an element is O(n). Comparing the ids after each
  ///   action is O(1) when this reducer did not write to the collection or
  ///   kept every id in place, else O(n).
  @inlinable
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
    let parent = effectfulBody
    let elementBody = element.effectfulBody
    let lens = StateLens(state)
    return Reduce { root, rootAction in
      var childEffect = Effect<Action>.none
      if let (id, elementAction) = action.extract(rootAction) {
        var found = false
        var newID: Elements.Element.ID?
        let effect = lens.modify(&root) { elements -> Effect<ElementAction> in
          guard let index = Self.index(of: id, in: elements) else { return .none }
          found = true
          let effect = elementBody(&elements[index], elementAction)
          if elements[index].id != id { newID = elements[index].id }
          return effect
        }
        if !found {
          childEffect = .reportMissingChild(rootAction, at: .element(state, id: id), fileID: fileID, line: line)
        } else if !effect.isNone {
          childEffect = effect.lifted(
            through: .element(state, id: id), embed: { action.embed((id, $0)) }, dependencies: dependencies,
            fileID: fileID, line: line)
        }
        if let newID {
          // The element gave itself another id: the child with `id` has left
          // (the element with the new one is another child).
          childEffect = childEffect.merging(.endingChild(at: .element(state, id: id)))
          if lens.modify(&root, { Self.count(of: newID, in: $0) }) == 2 {
            childEffect = childEffect.merging(.reportDuplicate(newID, in: state, fileID: fileID, line: line))
          }
        }
      }
      // Taken after the element ran (it changes the collection in place),
      // before the parent: a copy only if the parent changes it.
      let before = lens.get(&root)
      let parentEffect = parent(&root, rootAction)
      guard let changes = Self.idChanges(from: before, to: lens.get(&root)) else {
        return childEffect.merging(parentEffect)
      }
      let endings = changes.left.map { Effect<Action>.endingChild(at: .element(state, id: $0)) }
      let reports = changes.duplicated.map {
        Effect<Action>.reportDuplicate($0, in: state, fileID: fileID, line: line)
      }
      return .merge([childEffect, parentEffect] + endings + reports)
    }
  }

  /// The position of the element with `id`, the first if several have it.
  @inlinable
  static func index<Elements: Collection>(
    of id: Elements.Element.ID, in elements: Elements
  ) -> Elements.Index? where Elements.Element: Identifiable {
    elements.firstIndex { $0.id == id }
  }

  /// How many elements of `elements` have `id`.
  @usableFromInline
  static func count<Elements: Collection>(
    of id: Elements.Element.ID, in elements: Elements
  ) -> Int where Elements.Element: Identifiable {
    elements.reduce(0) { $1.id == id ? $0 + 1 : $0 }
  }

  /// What changed in the ids from `before` to `after`: those held by fewer
  /// elements, and those now held by several; `nil` if nothing did. O(1)
  /// when the buffer was not written to, else O(n).
  @inlinable
  static func idChanges<Elements: Collection>(
    from before: Elements, to after: Elements
  ) -> IDChanges<Elements.Element.ID>? where Elements.Element: Identifiable {
    if before.count == after.count {
      // `before` holds the buffer, so a write to `after` would have copied
      // it: the same start address means the same elements.
      let sameStorage = before.withContiguousStorageIfAvailable { old in
        after.withContiguousStorageIfAvailable { new in old.baseAddress == new.baseAddress }
      }
      if sameStorage == true { return nil }
      // The same ids in the same places: none left, none came twice (a
      // duplicate that was there stays as it was).
      if zip(before, after).allSatisfy({ $0.id == $1.id }) { return nil }
    }
    let kept = Set(after.lazy.map(\.id))
    var seen = Set<Elements.Element.ID>(minimumCapacity: before.count)
    var left: [Elements.Element.ID] = []
    for element in before {
      let id = element.id
      guard seen.insert(id).inserted else {
        // An id on several elements before: counted below.
        return countedChanges(from: before, to: after)
      }
      if !kept.contains(id) { left.append(id) }
    }
    guard kept.count == after.count else { return countedChanges(from: before, to: after) }
    return left.isEmpty ? nil : IDChanges(left: left)
  }

  /// `idChanges` where an id is on several elements, before or after:
  /// counted, id by id. Rare (a duplicate is a bug), so not inlined.
  @usableFromInline
  static func countedChanges<Elements: Collection>(
    from before: Elements, to after: Elements
  ) -> IDChanges<Elements.Element.ID>? where Elements.Element: Identifiable {
    var counts: [Elements.Element.ID: (before: Int, after: Int)] = [:]
    for element in before { counts[element.id, default: (0, 0)].before += 1 }
    for element in after { counts[element.id, default: (0, 0)].after += 1 }
    var changes = IDChanges<Elements.Element.ID>()
    var listed = Set<Elements.Element.ID>()
    for element in before where listed.insert(element.id).inserted {
      if let count = counts[element.id], count.after < count.before { changes.left.append(element.id) }
    }
    listed = []
    for element in after where listed.insert(element.id).inserted {
      if let count = counts[element.id], count.after >= 2, count.before < 2 { changes.duplicated.append(element.id) }
    }
    return changes.left.isEmpty && changes.duplicated.isEmpty ? nil : changes
  }
}

/// What an action changed in the ids of a `forEach`'s collection.
@usableFromInline
struct IDChanges<ID: Hashable> {
  /// The ids now held by fewer elements than before: the children with
  /// them end.
  @usableFromInline var left: [ID]
  /// The ids that came to be held by more than one element: reported.
  @usableFromInline var duplicated: [ID]

  @inlinable
  init(left: [ID] = [], duplicated: [ID] = []) {
    self.left = left
    self.duplicated = duplicated
  }
}
