// Synchronous subscribers: callbacks the core calls inside its isolation
// after each publication, with the same selectors and deduplication as
// `observe`. What ReSwift, Unicore and Core-seed code migrates from, and
// the cheapest way to fan a state out: no task is woken.
extension Core {
  /// Calls `body` inside the core with the value `select` picks: at once with
  /// the current value, then after each publication in which it changed.
  ///
  /// ```swift
  /// let subscriber = await core.subscribe(to: { $0.items.count }) { count in
  ///   badge.text = "\(count)"
  /// }
  /// ```
  ///
  /// A `.latest` subscriber is called after each `dispatch` (before it
  /// returns) and after each batch of sent actions the core drains; an
  /// `.all` subscriber after every action. Either is skipped while its value
  /// equals the last one it was called with.
  ///
  /// - Parameters:
  ///   - select: Picks the value from the state: a key path or a closure.
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
  public func subscribe<Props: Sendable & Equatable>(
    to select: @escaping @Sendable (State) -> Props,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) -> Subscriber {
    subscribe(select: select, isDuplicate: { $0 == $1 }, policy: policy, body: body)
  }

  /// Calls `body` inside the core with the value at `keyPath`: at once with
  /// the current value, then after each publication in which it changed.
  ///
  /// ```swift
  /// let subscriber = await core.subscribe(to: \.count) { count in
  ///   label.text = "\(count)"
  /// }
  /// ```
  ///
  /// The same as subscribing with a closure, and cheaper when many
  /// subscribe to one value: subscribers with the same key path and policy
  /// share one read of the value and one comparison per publication, and
  /// then cost a call each.
  @inlinable
  public func subscribe<Props: Sendable & Equatable>(
    to keyPath: KeyPath<State, Props> & Sendable,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) -> Subscriber {
    subscribe(
      select: selector(keyPath), isDuplicate: { $0 == $1 }, policy: policy, keyPath: keyPath, body: body)
  }

  /// Calls `body` inside the core with the value `select` picks, skipping
  /// values that `isDuplicate` says equal the last one it was called with.
  ///
  /// ```swift
  /// let subscriber = await core.subscribe(to: \.user, removeDuplicates: { $0.id == $1.id }) { user in
  ///   header.show(user)
  /// }
  /// ```
  ///
  /// Pass `removeDuplicates: { _, _ in false }` to be called on every
  /// publication. Everything else is as in ``subscribe(to:buffering:_:)-89qf7``.
  @inlinable
  public func subscribe<Props: Sendable>(
    to select: @escaping @Sendable (State) -> Props,
    removeDuplicates isDuplicate: @escaping @Sendable (Props, Props) -> Bool,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) -> Subscriber {
    subscribe(select: select, isDuplicate: isDuplicate, policy: policy, body: body)
  }

  /// Calls `body` inside the core with the value `select` picks, where the
  /// value's static type is not known to be `Equatable`.
  ///
  /// ```swift
  /// let subscriber = await core.subscribe(to: \.snapshot) { snapshot in show(snapshot) }
  /// ```
  ///
  /// If the value's type is `Equatable` at run time, duplicates are skipped
  /// as in ``subscribe(to:buffering:_:)-89qf7``; otherwise `body` is called on
  /// every publication.
  @inlinable
  public func subscribe<Props: Sendable>(
    to select: @escaping @Sendable (State) -> Props,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) -> Subscriber {
    subscribe(select: select, isDuplicate: dynamicEquality(Props.self), policy: policy, body: body)
  }

  @inlinable
  func subscribe<Props: Sendable>(
    select: @escaping @Sendable (State) -> Props,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?,
    policy: BufferingPolicy,
    keyPath: AnyKeyPath? = nil,
    api: StaticString = #function,
    body: @escaping @Sendable (Props) -> Void
  ) -> Subscriber {
    prepareRegistration(api)
    let registration = SubscriberRegistration(counter: observerCounter)
    join(
      SubscriberMember(registration: registration, body: body), select: select, isDuplicate: isDuplicate,
      policy: policy, keyPath: keyPath, isSubscriber: true)
    return Subscriber(registration: registration)
  }
}
