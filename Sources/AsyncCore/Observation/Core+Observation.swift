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
  ) async -> CoreStream<State> {
    let deduplication = Deduplication(isDuplicate)
    return await register(
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
  ) async -> CoreStream<Props> {
    let deduplication = Deduplication(isDuplicate)
    return await register(
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
  ) async -> CoreStream<Props> {
    await register(select: select, isDuplicate: Deduplication(isDuplicate).isDuplicate, policy: policy)
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
  ) async -> CoreStream<ActionRecord<State, Action>> {
    await prepareRegistration()
    let observer = Observer<ActionRecord<State, Action>>(policy: policy, counter: observerCounter)
    if lifecycle.isStopped {
      observer.finish()
    } else {
      observers.addActionObserver(observer)
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
  ) async -> CoreStream<Props> {
    let key = keyPath.map { SelectionKey(keyPath: $0, policy: policy, isSubscriber: false) }
    let observer = await attach(key: key, policy: policy, isSubscriber: false, api: api) { existing in
      // Made after `prepareRegistration`, which prunes by the count of
      // observers: made before, it would be counted as ended.
      let observer = Observer<Props>(policy: policy, counter: observerCounter)
      return (.of(observer, joining: existing, select: select, isDuplicate: isDuplicate), observer)
    }
    return CoreStream(observer: observer)
  }

  /// Before any registration: the current state includes every action
  /// accepted before the call, and ended registrations are gone.
  @inlinable
  func prepareRegistration(_ api: StaticString = #function) async {
    checkNotRunningUserCode(api)
    await catchUpQueued()
    removeEndedObservers()
    if !observers.hasPruner { installPruner() }
  }

  /// Gives `observerCounter` a way to ask for a prune: an ended subscriber's
  /// callback may hold the core, so it goes now, not at a publication that
  /// may never come. Weak; installed at the first registration.
  @usableFromInline
  func installPruner() {
    observers.hasPruner = true
    observerCounter.setPruner { [weak self] in
      guard let self else { return }
      Task { await self.pruneEndedObservers() }
    }
  }

  /// Registers one observer or subscriber, the core's own or a scoped
  /// handle's: `join` (the caller's inlinable code) makes the member, which
  /// gets the current state first; on a stopped core it then ends, and a
  /// member of a child already gone ends at once with no value. Returns what
  /// `join` returned beside the join.
  @inlinable
  func attach<Result>(
    key: SelectionKey?,
    policy: BufferingPolicy,
    isSubscriber: Bool,
    life: ScopeLife? = nil,
    endedBy lifetimeIDs: [CancelID] = [],
    api: StaticString,
    join: ((any Registrations)?) -> (GroupJoin<State>, Result)
  ) async -> Result {
    await prepareRegistration(api)
    if let life, life.isRemoved {
      // The handle's child is gone (a child with its id now is another).
      let (joined, result) = join(nil)
      joined.finishMember()
      return result
    }
    let existing = observers.group(for: key)
    let (joined, result) = join(existing)
    let state = currentState
    runningUserCode { joined.add(state) }
    guard !lifecycle.isStopped else {
      joined.finishMember()
      return result
    }
    observers.countIn()
    guard joined.registrations !== existing else { return result }
    let entry = Subscription(publish: joined.publish, registrations: joined.registrations, key: key)
    observers.add(entry, policy: policy, isSubscriber: isSubscriber, isEnding: life != nil)
    if life != nil { endWithChild(entry, livingBy: lifetimeIDs) }
    return result
  }
}
