// Scoped handles: `core.scope(…)` and what the handles need from their
// core, inside its isolation.
extension Core {
  /// A handle on the part of the state at `state`, sending child actions
  /// into this core in the parent's case `action`.
  ///
  /// ```swift
  /// let counter = core.scope(state: \.counter, action: AppAction.counterCase)
  /// counter.send(.increment)                       // reduced as .counter(.increment)
  /// for await count in await counter.observe(\.count) { print(count) }
  /// ```
  ///
  /// `action` is the same ``ActionCase`` that places the child's reducer
  /// (``Reduce/scope(state:action:dependencies:fileID:line:child:)``); the
  /// handle only embeds with it. The handle observes the child with the
  /// same selectors, deduplication and buffering policies as the core;
  /// observing through it costs what observing the core costs. It holds the
  /// core, and a few words more.
  // Disfavoured: a key path to an optional must pick the optional form,
  // which is `async`, even where the synchronous form could be called.
  @_disfavoredOverload
  public nonisolated func scope<ChildState: Sendable, ChildAction: Sendable>(
    state: KeyPath<State, ChildState> & Sendable,
    action: ActionCase<Action, ChildAction>
  ) -> ScopedCore<ChildState, ChildAction> {
    CoreScope(
      core: self, path: ScopePath(steps: [.fixed(state)]), life: nil,
      get: selector(state), embed: action.embed)
  }

  /// A handle on the optional child at `state`, or `nil` if it is `nil`
  /// now.
  ///
  /// ```swift
  /// if let detail = await core.scope(state: \.detail, action: AppAction.detailCase) {
  ///   for await title in await detail.observe(\.title) { print(title) }
  ///   // the loop ends, after the last title, once the detail is dismissed
  /// }
  /// ```
  ///
  /// Once the child becomes `nil` (see ``Reduce/ifLet(_:action:dependencies:fileID:line:then:)``),
  /// loops observing it end after its last value, and the handle refuses
  /// actions: `send` returns ``SendResult/childRemoved``, `dispatch` throws
  /// ``CoreError/childRemoved``. A later child at the same place is a new
  /// child: scope to it again. The core sees the removal after the action
  /// that made it, whichever reducer did.
  ///
  /// A key path through an optional (`\.sheet?.title`) gives a handle on
  /// that value: it ends when the value becomes `nil`, but an `Identifiable`
  /// sheet replaced in one action by another is only seen by a handle on
  /// the sheet (`\.sheet`, then `scope(state: \.title, …)` on it).
  // Inlinable, as the element form: the handle's lookups of its child run
  // after every action while it is alive, compiled for the client's types.
  @inlinable
  public func scope<ChildState: Sendable, ChildAction: Sendable>(
    state: KeyPath<State, ChildState?> & Sendable,
    action: ActionCase<Action, ChildAction>
  ) async -> ScopedCore<ChildState, ChildAction>? {
    let lens = ReadLens(state)
    return await makeScope(
      path: ScopePath(steps: [.optional(state)]), get: { lens.read($0) { $0 } },
      isPresent: { lens.read($0) { $0 != nil } }, embed: action.embed)
  }

  /// A handle on the element with `id` of the collection at `state`, or
  /// `nil` if no element has that id now.
  ///
  /// ```swift
  /// if let row = await core.scope(state: \.rows, id: row.id, action: ListAction.rowCase) {
  ///   row.send(.toggle)   // reduced as .row(id: row.id, action: .toggle)
  /// }
  /// ```
  ///
  /// Once the element leaves the collection (see
  /// ``Reduce/forEach(_:action:dependencies:fileID:line:element:)``), loops
  /// observing it end after its last value, and the handle refuses actions.
  ///
  /// - Complexity: Each publication to an observer through the handle
  ///   finds the element, O(n) in the collection's size.
  ///
  /// While any handle on an optional child or an element is alive, the core
  /// checks after each action that its child is still there (see
  /// <doc:Composition>).
  @inlinable
  public func scope<Elements, ChildAction: Sendable>(
    state: KeyPath<State, Elements> & Sendable,
    id: Elements.Element.ID,
    action: ActionCase<Action, (Elements.Element.ID, ChildAction)>
  ) async -> ScopedCore<Elements.Element, ChildAction>?
  where
    Elements: RandomAccessCollection & SendableMetatype, Elements.Element: Identifiable & Sendable,
    Elements.Element.ID: Sendable
  {
    let finder = ElementFinder(state, id: id)
    let embed = action.embed
    return await makeScope(
      path: ScopePath(steps: [.element(state, id: id)]), get: { finder.element(in: $0) },
      isPresent: { finder.isPresent(in: $0) }, embed: { embed((id, $0)) })
  }

  /// A handle on a child that can leave the state, made inside the core so
  /// that it is either absent now (`nil`) or registered before it can leave.
  /// `isPresent` tells, cheaper than `get`, whether `get` finds the child.
  @usableFromInline
  func makeScope<ChildState: Sendable, ChildAction: Sendable>(
    path: ScopePath,
    get: @escaping @Sendable (State) -> ChildState?,
    isPresent: (@Sendable (State) -> Bool)? = nil,
    embed: @escaping @Sendable (ChildAction) -> Action,
    api: StaticString = #function
  ) async -> ScopedCore<ChildState, ChildAction>? {
    checkNotRunningUserCode(api)
    await catchUpQueued()
    let state = currentState
    guard let child = runningUserCode({ get(state) }) else { return nil }
    var get = get
    var isPresent = isPresent
    let identity = ChildIdentity<ChildState>()
    if path.steps.last?.id == nil, identity.isIdentifiable {
      // An `Identifiable` optional child: another id in its place is not it.
      let find = get
      get = { root in find(root).flatMap { identity.id(of: $0) == identity.id(of: child) ? $0 : nil } }
      isPresent = nil
    }
    let life = ScopeLife()
    if lifecycle.isStopped {
      // Nothing will be removed any more; the handle refuses actions as
      // the core does, and its observers end after their first value.
    } else {
      register(life, endedBy: path.lifetimeIDs)
      let find = get
      watch(path.lifetimeID, for: life, isPresent: isPresent ?? { find($0) != nil })
    }
    return CoreScope(core: self, path: path, life: life, get: get, embed: embed)
  }

  /// Checks, after every action from now on, that the child whose lifetime
  /// id is `id` is still there, for the handle `life`. Handles on one child
  /// share its watch; a later handle on a replacement gets its own.
  func watch(_ id: CancelID, for life: ScopeLife, isPresent: @escaping @Sendable (State) -> Bool) {
    makeScopeBook().watch(id, for: life, isPresent: isPresent)
  }

  /// Whether any child is watched: then each action is followed by
  /// `checkWatchedChildren()`.
  @inlinable
  var isWatchingChildren: Bool {
    guard let scopeBook else { return false }
    return !scopeBook.watchChecks.isEmpty
  }

  /// After an action: ends the handles of each watched child that has left.
  /// O(watched children); inlinable, so compiled for the client's state.
  @inlinable
  func checkWatchedChildren() {
    guard let book = scopeBook else { return }
    book.checksUntilPrune -= 1
    if book.checksUntilPrune <= 0 { book.pruneWatches() }
    let state = currentState
    var gone: [Int] = []
    runningUserCode {
      book.watchChecks.withUnsafeBufferPointer { checks in
        for index in checks.indices where !checks[index](state) { gone.append(index) }
      }
    }
    guard !gone.isEmpty else { return }
    endWatchedChildren(gone.map { book.watchedIDs[$0] })
  }

  /// Ends the handles of the watched children `ids`, which have left.
  @usableFromInline
  func endWatchedChildren(_ ids: [CancelID]) {
    for id in ids { endScopes(livingBy: id) }
  }

  /// Registers `life` to end when any of `ids` is cancelled.
  func register(_ life: ScopeLife, endedBy ids: [CancelID]) {
    let book = makeScopeBook()
    for id in ids {
      book.handles[id, default: []].append(WeakScopeLife(life: life))
    }
    if book.handles.count >= book.compactionCount {
      // Drop entries whose handles were all released.
      book.handles = book.handles.compactMapValues { lives in
        let kept = lives.filter { $0.life != nil }
        return kept.isEmpty ? nil : kept
      }
      book.compactionCount = max(64, 2 * book.handles.count)
    }
  }

  /// Ends the handles of the child whose lifetime id `id` is, if it is one.
  /// Their observers are first published the state before the removing
  /// action, so each gets its child's last value before it ends.
  @usableFromInline
  func endScopes(livingBy id: CancelID) {
    guard let book = scopeBook, id.isLifetime else { return }
    if let before = book.stateBeforeAction, !observers.endingSubscriptions.isEmpty {
      publish(before, to: observers.endingSubscriptions)
    }
    if let lives = book.handles.removeValue(forKey: id) {
      for entry in lives { entry.life?.end() }
    }
    book.unwatch(id)
    if let groups = book.groups.removeValue(forKey: id) {
      for group in groups {
        // A handle on a child with the same path from now on is on another
        // child: it starts a group of its own.
        if let key = group.key { observers.forgetGroup(key, ifStill: group.registrations) }
        group.registrations.finish()
      }
    }
  }

  /// The core's `ScopeBook`, made on first use.
  func makeScopeBook() -> ScopeBook<State> {
    if let scopeBook { return scopeBook }
    let book = ScopeBook<State>()
    scopeBook = book
    return book
  }

  /// Hands `report`, which a reducer's effect makes, to the diagnostics
  /// handler.
  @usableFromInline
  func report(_ report: ScopeReport) {
    diagnostics(report.failure)
  }

  /// A child handle's `state`: the child as it is once every action sent
  /// before is reduced.
  func scopedState<ChildState>(
    _ get: @Sendable (State) -> ChildState?, life: ScopeLife?
  ) async throws(CoreError) -> ChildState {
    checkNotRunningUserCode("state")
    // A child once gone stays gone for its handles, even if one with the
    // same id comes back: that is another child.
    if let life, life.isRemoved { throw .childRemoved }
    await catchUpQueued()
    if let life, life.isRemoved { throw .childRemoved }
    let state = currentState
    guard let child = runningUserCode({ get(state) }) else {
      life?.end()
      throw .childRemoved
    }
    return child
  }

  /// A child handle's `dispatch`: refused once the core has shut down or
  /// the child is gone, checked after the actions sent before are reduced.
  func dispatch(
    _ actions: [Action], toChildPresentIn isPresent: (@Sendable (State) -> Bool)?, life: ScopeLife?
  ) async throws(CoreError) -> EffectHandle {
    guard lifecycle.acceptsOutsideActions else { throw .shutDown }
    checkNotRunningUserCode("dispatch(_:)")
    if journal != nil {
      // On a durable core the check comes before the actions are queued;
      // a child gone in between gets them as an action for a missing child.
      if let isPresent {
        await awaitJournalPosition()
        let state = currentState
        guard !(life?.isRemoved ?? false), runningUserCode({ isPresent(state) }) else {
          life?.end()
          throw .childRemoved
        }
      }
      return try await dispatchJournaled(actions)
    }
    reducePending()
    if let isPresent {
      let state = currentState
      guard runningUserCode({ isPresent(state) }) else {
        life?.end()
        publishBatch()
        throw .childRemoved
      }
    }
    var lineage: Lineage?
    for action in actions { reduce(action, lineage: &lineage) }
    publishAfterDispatch()
    return EffectHandle(lineage: lineage)
  }

  /// Ends the group of `entry` when any lifetime it lives by ends, after the
  /// child's last value, even if the child never reads `nil`.
  @usableFromInline
  func endWithChild(_ entry: Subscription<State>, livingBy lifetimeIDs: [CancelID]) {
    let book = makeScopeBook()
    for id in lifetimeIDs {
      book.groups[id, default: []].append(ScopeBook.Group(key: entry.key, registrations: entry.registrations))
    }
  }
}

extension GroupJoin {
  /// The join of a scoped handle's `member` (see `GroupJoin.of`), its group
  /// published the child's state, `nil` once the child is gone; `isEnding`:
  /// the child can leave the state, and then `nil` ends the members.
  @inlinable
  static func scoped<ChildState, Member: GroupMember>(
    _ member: Member,
    joining existing: (any Registrations)?,
    select: @escaping @Sendable (ChildState) -> Member.Props,
    isDuplicate: (@Sendable (Member.Props, Member.Props) -> Bool)?,
    isEnding: Bool
  ) -> GroupJoin where Input == ChildState? {
    if isEnding {
      return .of(
        EndingMember(inner: member, isDuplicate: isDuplicate), joining: existing, select: { $0.map(select) },
        isDuplicate: endingDuplicate(isDuplicate))
    }
    let group =
      existing as? SelectionGroup<ChildState, Member> ?? SelectionGroup(select: select, isDuplicate: isDuplicate)
    return GroupJoin(
      registrations: group,
      publish: { child in if let child { group.publish(child) } },
      add: { child in if let child { group.add(member, at: child) } },
      finishMember: { member.finish() })
  }
}

/// A member of a group whose selection ends: `nil` (the child is gone)
/// ends it; a value goes to `inner` with `inner`'s own comparison.
@usableFromInline
struct EndingMember<Inner: GroupMember>: GroupMember {
  @usableFromInline let inner: Inner
  @usableFromInline let isDuplicate: (@Sendable (Inner.Props, Inner.Props) -> Bool)?

  @inlinable
  init(inner: Inner, isDuplicate: (@Sendable (Inner.Props, Inner.Props) -> Bool)?) {
    self.inner = inner
    self.isDuplicate = isDuplicate
  }

  @inlinable
  func receive(_ props: Inner.Props?, isDuplicate _: (@Sendable (Inner.Props?, Inner.Props?) -> Bool)?) {
    guard let props else {
      inner.finish()
      return
    }
    inner.receive(props, isDuplicate: isDuplicate)
  }

  @inlinable
  var isActive: Bool { inner.isActive }

  @inlinable
  func finish() { inner.finish() }
}

/// The comparison of an ending selection: two `nil`s are the same (the
/// child stays gone), a value and `nil` differ, two values compare with
/// `isDuplicate`.
@inlinable
func endingDuplicate<Props>(
  _ isDuplicate: (@Sendable (Props, Props) -> Bool)?
) -> @Sendable (Props?, Props?) -> Bool {
  { old, new in
    switch (old, new) {
    case (nil, nil): return true
    case (let old?, let new?): return isDuplicate?(old, new) ?? false
    default: return false
    }
  }
}
