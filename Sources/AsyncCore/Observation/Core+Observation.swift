import Synchronization

extension Core {
  /// The state, for `for await`: the current state first, then the state
  /// after each change.
  ///
  /// ```swift
  /// for await state in await core.states() {
  ///   render(state)
  /// }
  /// ```
  ///
  /// By default (`removeDuplicates: nil`) a state equal to the last one
  /// delivered is skipped when `State` is `Equatable`; otherwise every
  /// publication is delivered (see
  /// ``observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)``
  /// for the rule). Pass `removeDuplicates: { _, _ in false }` to receive
  /// every publication of an `Equatable` state.
  ///
  /// - Parameters:
  ///   - isDuplicate: Returns `true` when the second state (new) should not
  ///     be delivered after the first (the last one delivered); runs inside
  ///     the core. `nil` (the default): `==` when `State` is `Equatable`.
  ///   - policy: `.latest` (default) lets a slow observer skip to the
  ///     newest state; `.all` delivers every state, in order.
  /// - Important: The observer is registered when this returns, so no state
  ///   published afterwards is missed. After ``shutdown(_:)`` the stream yields
  ///   the final state and ends.
  @inlinable
  public func states(
    removeDuplicates isDuplicate: (@Sendable (State, State) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) -> CoreStream<State> {
    let deduplication = Deduplication(isDuplicate)
    return register(
      select: { $0 }, isDuplicate: deduplication.isDuplicate, policy: policy,
      keyPath: deduplication.sharing(\State.self))
  }

  /// The value at `keyPath`, for `for await`: its current value first, then
  /// each value that differs from the one before.
  ///
  /// ```swift
  /// for await count in await core.observe(\.count) {
  ///   label.text = "\(count)"
  /// }
  /// for await user in await core.observe(\.user, removeDuplicates: { $0.id == $1.id }) {
  ///   showProfile(user)
  /// }
  /// ```
  ///
  /// What counts as a duplicate, not delivered again:
  /// - `removeDuplicates: nil` (the default): a value `==` the last one
  ///   delivered, when `Props` is `Equatable` (decided once, when the
  ///   observer registers; `==` is compiled for the type where the caller's
  ///   type is known). A value behind an existential (`any Sendable`) is
  ///   compared with `==` when its dynamic type is `Equatable`. Any other
  ///   value is delivered on every publication.
  /// - A closure: the values for which it returns `true`, given the last
  ///   one delivered and the new one. `{ _, _ in false }` delivers every
  ///   publication.
  ///
  /// The selection and the comparison run inside the core, so the consuming
  /// task is woken only when its value changed. Under `.latest` a value
  /// equal to the one the consumer last took is never delivered again.
  ///
  /// Observers of an `Equatable` value with the same key path and policy
  /// and the default comparison share one read of the value and one `==`
  /// per publication, however many there are. (Under `.latest`, an observer whose consumer
  /// has not yet taken the value before compares the new one once more,
  /// with the value its consumer holds, so as never to hand it that value
  /// again.)
  ///
  /// - Parameters:
  ///   - keyPath: The observed value's place in the state.
  ///   - isDuplicate: Returns `true` when the second value (new) should not
  ///     be delivered after the first; runs inside the core. `nil`: the
  ///     rule above.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  @inlinable
  public func observe<Props: Sendable>(
    _ keyPath: KeyPath<State, Props> & Sendable,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) -> CoreStream<Props> {
    let deduplication = Deduplication(isDuplicate)
    return register(
      select: selector(keyPath), isDuplicate: deduplication.isDuplicate, policy: policy,
      keyPath: deduplication.sharing(keyPath))
  }

  /// The part of the state `select` picks, for `for await`: its current
  /// value first, then each value that differs from the one before.
  ///
  /// ```swift
  /// for await isEmpty in await core.observe({ $0.items.isEmpty }) {
  ///   placeholder.isHidden = !isEmpty
  /// }
  /// ```
  ///
  /// Duplicates are decided as for a key path
  /// (``observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)``);
  /// a closure selector has no identity, so each such observer runs its
  /// own selector and comparison.
  ///
  /// - Parameters:
  ///   - select: Picks the observed value from the state. Runs inside the
  ///     core; keep it cheap and free of side effects.
  ///   - isDuplicate: Returns `true` when the second value (new) should not
  ///     be delivered after the first; runs inside the core. `nil`: `==`
  ///     when `Props` is `Equatable`.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  @inlinable
  public func observe<Props: Sendable>(
    _ select: @escaping @Sendable (State) -> Props,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) -> CoreStream<Props> {
    register(select: select, isDuplicate: Deduplication(isDuplicate).isDuplicate, policy: policy)
  }

  /// Every reduced action with the state before and after it, in order.
  ///
  /// ```swift
  /// for await record in await core.actions() {
  ///   logger.debug("\(record.action): \(record.stateBefore) → \(record.stateAfter)")
  /// }
  /// ```
  ///
  /// Unlike state observers there is no current value: the first element
  /// is the first action reduced after this call. Records are never
  /// deduplicated. While any such observer is registered, the core copies
  /// the state before each action.
  ///
  /// - Parameter policy: `.all` (default) delivers every action; `.latest`
  ///   keeps only the newest record for a slow observer.
  public func actions(
    buffering policy: BufferingPolicy = .all
  ) -> CoreStream<ActionRecord<State, Action>> {
    prepareRegistration()
    let observer = Observer<ActionRecord<State, Action>>(policy: policy, counter: observerCounter)
    if lifecycle.isStopped {
      observer.finish()
    } else {
      actionObservers.append(observer)
      registeredCount += 1
      hasObservers = true
    }
    return CoreStream(observer: observer)
  }

  @inlinable
  func register<Props: Sendable>(
    select: @escaping @Sendable (State) -> Props,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?,
    policy: BufferingPolicy,
    keyPath: AnyKeyPath? = nil,
    api: StaticString = #function
  ) -> CoreStream<Props> {
    prepareRegistration(api)
    let observer = Observer<Props>(policy: policy, counter: observerCounter)
    join(observer, select: select, isDuplicate: isDuplicate, policy: policy, keyPath: keyPath, isSubscriber: false)
    return CoreStream(observer: observer)
  }

  /// Before any registration: the current state includes every action
  /// accepted before the call, and ended registrations are gone.
  @inlinable
  func prepareRegistration(_ api: StaticString = #function) {
    checkNotRunningUserCode(api)
    flushMailbox()
    removeEndedObservers()
    if !hasPruner { installPruner() }
  }

  /// Gives `observerCounter` the way to ask for a prune. An ended
  /// subscriber's callback may hold the core: it is dropped from the lists
  /// now, not at the next publication, which may never come. Weak, so a
  /// registration never keeps its core alive; a core going away drops every
  /// registration anyway. Done at the first registration: the closure and
  /// the weak reference would cost an idle core two blocks.
  @usableFromInline
  func installPruner() {
    hasPruner = true
    observerCounter.setPruner { [weak self] in
      guard let self else { return }
      Task { await self.pruneEndedObservers() }
    }
  }

  /// Adds `member` to the group of its key path (a new group for a closure
  /// selector, or the first of its key path), which hands it the current
  /// value first; then counts it in, or, on a stopped core, ends it after
  /// that value.
  /// Returns the new entry, if the member did not join an existing one.
  @inlinable
  @discardableResult
  func join<Member: GroupMember>(
    _ member: Member,
    select: @escaping @Sendable (State) -> Member.Props,
    isDuplicate: (@Sendable (Member.Props, Member.Props) -> Bool)?,
    policy: BufferingPolicy,
    keyPath: AnyKeyPath?,
    isSubscriber: Bool
  ) -> Subscription<State>? {
    let key = keyPath.map { SelectionKey(keyPath: $0, policy: policy, isSubscriber: isSubscriber) }
    let existing = key.flatMap { groupsByKey[$0] as? SelectionGroup<State, Member> }
    let group = existing ?? SelectionGroup(select: select, isDuplicate: isDuplicate)
    let state = currentState
    runningUserCode { group.add(member, at: state) }
    guard !lifecycle.isStopped else {
      member.finish()
      return nil
    }
    registeredCount += 1
    hasObservers = true
    guard existing == nil else { return nil }
    let entry = Subscription(publish: { group.publish($0) }, registrations: group, key: key)
    switch policy {
    case .latest where isSubscriber: latestSubscribers.append(entry)
    case .latest: latestSubscriptions.append(entry)
    case .all: everyStateSubscriptions.append(entry)
    }
    if let key { groupsByKey[key] = group }
    return entry
  }
}
