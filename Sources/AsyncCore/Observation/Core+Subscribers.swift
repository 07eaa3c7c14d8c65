// Synchronous subscribers: callbacks the core calls inside its isolation
// after each publication, as `observe` selects and deduplicates; no task is woken.
extension Core {
  /// Calls `body` inside the core with the value at `keyPath`: at once with
  /// the current value, then after each publication in which it changed.
  ///
  /// ```swift
  /// let subscriber = await core.subscribe(to: \.count) { count in
  ///   label.text = "\(count)"
  /// }
  /// let header = await core.subscribe(to: \.user, removeDuplicates: { $0.id == $1.id }) { user in
  ///   headerView.show(user)
  /// }
  /// ```
  ///
  /// A `.latest` subscriber is called after each `dispatch` (before it
  /// returns) and after each batch of sent actions the core drains; an
  /// `.all` subscriber after every action. Either is skipped while its value
  /// is a duplicate of the last one it was called with, decided as for
  /// ``observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)``:
  /// by default `==` when `Props` is `Equatable`.
  ///
  /// Subscribers to an `Equatable` value with the same key path and policy
  /// and the default comparison share one read of the value and one `==`
  /// per publication, and then cost a call each.
  ///
  /// - Parameters:
  ///   - keyPath: The value's place in the state.
  ///   - isDuplicate: Returns `true` when the second value (new) should not
  ///     be passed after the first; runs inside the core. `nil`: `==` when
  ///     `Props` is `Equatable`. `{ _, _ in false }`: called on every
  ///     publication.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  ///   - body: Runs inside the core, synchronously, one call at a time.
  /// - Returns: The subscription's token: it ends when the token is cancelled
  ///   or released, or when the core shuts down.
  /// - Important: `body` runs on the core's executor while every action
  ///   waits: it must be quick and must never block. It may call
  ///   ``send(_:)``, which queues the action for after the publication; it
  ///   must not reach back into the core (through `assumeIsolated`): that
  ///   stops the program with a message, as for reducers and selectors.
  @inlinable
  public func subscribe<Props: Sendable>(
    to keyPath: KeyPath<State, Props> & Sendable,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    let deduplication = Deduplication(isDuplicate)
    return await subscribe(
      select: selector(keyPath), isDuplicate: deduplication.isDuplicate, policy: policy,
      keyPath: deduplication.sharing(keyPath), body: body)
  }

  /// Calls `body` inside the core with the value `select` picks: at once with
  /// the current value, then after each publication in which it changed.
  ///
  /// ```swift
  /// let subscriber = await core.subscribe(to: { $0.items.count }) { count in
  ///   badge.text = "\(count)"
  /// }
  /// ```
  ///
  /// Everything is as in
  /// ``subscribe(to:removeDuplicates:buffering:_:)-(KeyPath<State,Props>Sendable,_,_,_)``,
  /// except that a closure selector has no identity: each such subscriber
  /// runs its own selector and comparison.
  ///
  /// - Parameters:
  ///   - select: Picks the value from the state; runs inside the core.
  ///   - isDuplicate: Returns `true` when the second value (new) should not
  ///     be passed after the first; runs inside the core. `nil`: `==` when
  ///     `Props` is `Equatable`.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  ///   - body: Runs inside the core, synchronously, one call at a time.
  /// - Returns: The subscription's token.
  @inlinable
  public func subscribe<Props: Sendable>(
    to select: @escaping @Sendable (State) -> Props,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    await subscribe(select: select, isDuplicate: Deduplication(isDuplicate).isDuplicate, policy: policy, body: body)
  }

  @inlinable
  func subscribe<Props: Sendable>(
    select: @escaping @Sendable (State) -> Props,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?,
    policy: BufferingPolicy,
    keyPath: AnyKeyPath? = nil,
    api: StaticString = #function,
    body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    let key = keyPath.map { SelectionKey(keyPath: $0, policy: policy, isSubscriber: true) }
    let registration = await attach(key: key, policy: policy, isSubscriber: true, api: api) { existing in
      let registration = SubscriberRegistration(counter: observerCounter)
      let member = SubscriberMember(registration: registration, body: body)
      return (.of(member, joining: existing, select: select, isDuplicate: isDuplicate), registration)
    }
    return Subscriber(registration: registration)
  }
}
