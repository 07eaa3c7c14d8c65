// Observing and scoping through a handle: the same calls as on `Core`, for
// the child's state. Each is registered with the core behind the handle.
extension ScopedCore {
  /// The child's state, for `for await`: its current value first, then each
  /// change.
  ///
  /// ```swift
  /// for await counter in await counterHandle.states() { render(counter) }
  /// ```
  ///
  /// As ``Core/states(buffering:)-2305o``: an `Equatable` state (checked at run
  /// time) skips duplicates. For a child that can leave the state, the loop
  /// ends after the child's last value.
  @inlinable
  public func states(buffering policy: BufferingPolicy = .latest) async -> CoreStream<State> {
    await observeChild(select: { $0 }, keyPath: nil, isDuplicate: dynamicEquality(State.self), policy: policy)
  }

  /// The child's state, for `for await`, skipping states that `isDuplicate`
  /// says equal the last one delivered.
  ///
  /// ```swift
  /// for await counter in await counterHandle.states(removeDuplicates: { _, _ in false }) { render(counter) }
  /// ```
  @inlinable
  public func states(
    buffering policy: BufferingPolicy = .latest,
    removeDuplicates isDuplicate: @escaping @Sendable (State, State) -> Bool
  ) async -> CoreStream<State> {
    await observeChild(select: { $0 }, keyPath: nil, isDuplicate: isDuplicate, policy: policy)
  }

  /// The value at `keyPath` in the child's state, for `for await`: its
  /// current value first, then each value that differs from the one before.
  ///
  /// ```swift
  /// for await count in await counterHandle.observe(\.count) { label.text = "\(count)" }
  /// ```
  ///
  /// As ``Core/observe(_:buffering:)-(KeyPath<State,Props>Sendable,_)``:
  /// for a child that is always there, observers of the same value through
  /// the core or any handle share one read and one comparison per
  /// publication (plus one for each observer whose consumer has not taken
  /// the value before).
  @inlinable
  public func observe<Props: Sendable & Equatable>(
    _ keyPath: KeyPath<State, Props> & Sendable,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<Props> {
    await observeChild(select: selector(keyPath), keyPath: keyPath, isDuplicate: { $0 == $1 }, policy: policy)
  }

  /// The part of the child's state `select` picks, for `for await`.
  ///
  /// ```swift
  /// for await isEven in await counterHandle.observe({ $0.count % 2 == 0 }) { print(isEven) }
  /// ```
  @inlinable
  public func observe<Props: Sendable & Equatable>(
    _ select: @escaping @Sendable (State) -> Props,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<Props> {
    await observeChild(select: select, keyPath: nil, isDuplicate: { $0 == $1 }, policy: policy)
  }

  /// The part of the child's state `select` picks, skipping values that
  /// `isDuplicate` says equal the last one delivered.
  ///
  /// ```swift
  /// for await user in await profile.observe(\.user, removeDuplicates: { $0.id == $1.id }) { show(user) }
  /// ```
  @inlinable
  public func observe<Props: Sendable>(
    _ select: @escaping @Sendable (State) -> Props,
    removeDuplicates isDuplicate: @escaping @Sendable (Props, Props) -> Bool,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<Props> {
    await observeChild(select: select, keyPath: nil, isDuplicate: isDuplicate, policy: policy)
  }

  /// The part of the child's state `select` picks, where the value's static
  /// type is not known to be `Equatable` (compared at run time if it is).
  ///
  /// ```swift
  /// for await snapshot in await detail.observe(\.image) { show(snapshot) }
  /// ```
  @inlinable
  public func observe<Props: Sendable>(
    _ select: @escaping @Sendable (State) -> Props,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<Props> {
    await observeChild(select: select, keyPath: nil, isDuplicate: dynamicEquality(Props.self), policy: policy)
  }

  // MARK: - Synchronous subscribers

  /// Calls `body` inside the core with the value at `keyPath` in the child's
  /// state: at once, then after each publication in which it changed.
  ///
  /// ```swift
  /// let subscriber = await counterHandle.subscribe(to: \.count) { count in label.text = "\(count)" }
  /// ```
  ///
  /// As ``Core/subscribe(to:buffering:_:)-(KeyPath<State,Props>Sendable,_,_)``.
  /// For a child that can leave the state, the subscription ends with it.
  @inlinable
  public func subscribe<Props: Sendable & Equatable>(
    to keyPath: KeyPath<State, Props> & Sendable,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    await subscribeChild(
      select: selector(keyPath), keyPath: keyPath, isDuplicate: { $0 == $1 }, policy: policy, body: body)
  }

  /// Calls `body` inside the core with the part of the child's state
  /// `select` picks, when it changed.
  ///
  /// ```swift
  /// let subscriber = await counterHandle.subscribe(to: { $0.count > 9 }) { isBig in badge.isHidden = !isBig }
  /// ```
  @inlinable
  public func subscribe<Props: Sendable & Equatable>(
    to select: @escaping @Sendable (State) -> Props,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    await subscribeChild(select: select, keyPath: nil, isDuplicate: { $0 == $1 }, policy: policy, body: body)
  }

  /// Calls `body` inside the core with the part of the child's state
  /// `select` picks, skipping values `isDuplicate` says equal the last one.
  ///
  /// ```swift
  /// let subscriber = await profile.subscribe(to: \.user, removeDuplicates: { $0.id == $1.id }) { header.show($0) }
  /// ```
  @inlinable
  public func subscribe<Props: Sendable>(
    to select: @escaping @Sendable (State) -> Props,
    removeDuplicates isDuplicate: @escaping @Sendable (Props, Props) -> Bool,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    await subscribeChild(select: select, keyPath: nil, isDuplicate: isDuplicate, policy: policy, body: body)
  }

  /// Calls `body` inside the core with the part of the child's state
  /// `select` picks, where the value's static type is not known to be
  /// `Equatable` (compared at run time if it is).
  ///
  /// ```swift
  /// let subscriber = await detail.subscribe(to: \.image) { show($0) }
  /// ```
  @inlinable
  public func subscribe<Props: Sendable>(
    to select: @escaping @Sendable (State) -> Props,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    await subscribeChild(
      select: select, keyPath: nil, isDuplicate: dynamicEquality(Props.self), policy: policy, body: body)
  }

  // MARK: - Scoping further

  /// A handle on the part of this child's state at `state`; see
  /// ``Core/scope(state:action:)->ScopedCore<ChildState,ChildAction>``.
  ///
  /// ```swift
  /// let header = profile.scope(state: \.header, action: ProfileAction.header)
  /// ```
  public func scope<ChildState: Sendable, ChildAction: Sendable>(
    state: KeyPath<State, ChildState> & Sendable,
    action: @escaping @Sendable (ChildAction) -> Action
  ) -> ScopedCore<ChildState, ChildAction> {
    fixedChild(state: state, embed: action)
  }

  /// A handle on the optional child at `state`, or `nil` if it is `nil` now
  /// or this handle's child is gone; see
  /// ``Core/scope(state:action:)->ScopedCore<ChildState,ChildAction>?``.
  ///
  /// ```swift
  /// if let editor = await profile.scope(state: \.editor, action: ProfileAction.editor) { … }
  /// ```
  public func scope<ChildState: Sendable, ChildAction: Sendable>(
    state: KeyPath<State, ChildState?> & Sendable,
    action: @escaping @Sendable (ChildAction) -> Action
  ) async -> ScopedCore<ChildState, ChildAction>? {
    await child(
      step: .optional(state), get: { $0[keyPath: state] }, embed: action, api: #function)
  }

  /// A handle on the element with `id` of the collection at `state` in this
  /// child's state, or `nil` if there is none now; see
  /// ``Core/scope(state:id:action:)``.
  ///
  /// ```swift
  /// if let row = await list.scope(state: \.rows, id: 7, action: ListAction.row) { row.send(.toggle) }
  /// ```
  public func scope<Elements, ChildAction: Sendable>(
    state: KeyPath<State, Elements> & Sendable,
    id: Elements.Element.ID,
    action: @escaping @Sendable (Elements.Element.ID, ChildAction) -> Action
  ) async -> ScopedCore<Elements.Element, ChildAction>?
  where
    Elements: RandomAccessCollection & SendableMetatype, Elements.Element: Identifiable & Sendable,
    Elements.Element.ID: Sendable
  {
    let finder = ElementFinder(state, id: id)
    return await child(
      step: .element(state, id: id), get: { finder.element(in: $0) },
      embed: { action(id, $0) }, api: #function)
  }

  // MARK: - Registering, compiled in the client

  /// Registers an observer of the part of the child `select` picks. Inlined
  /// into the caller, so its group and deliveries are compiled for its types.
  @inlinable
  func observeChild<Props: Sendable>(
    select: @escaping @Sendable (State) -> Props,
    keyPath: AnyKeyPath?,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?,
    policy: BufferingPolicy,
    api: StaticString = #function
  ) async -> CoreStream<Props> {
    let observer = Observer<Props>(policy: policy, counter: counter)
    let isEnding = life != nil
    await attach(keyPath: keyPath, policy: policy, isSubscriber: false, api: api) { existing in
      .of(observer, joining: existing, select: select, isDuplicate: isDuplicate, isEnding: isEnding)
    }
    return CoreStream(observer: observer)
  }

  /// Registers a synchronous subscriber of the part of the child `select`
  /// picks; see `observeChild`.
  @inlinable
  func subscribeChild<Props: Sendable>(
    select: @escaping @Sendable (State) -> Props,
    keyPath: AnyKeyPath?,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?,
    policy: BufferingPolicy,
    api: StaticString = #function,
    body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    let registration = SubscriberRegistration(counter: counter)
    let member = SubscriberMember(registration: registration, body: body)
    let isEnding = life != nil
    await attach(keyPath: keyPath, policy: policy, isSubscriber: true, api: api) { existing in
      .of(member, joining: existing, select: select, isDuplicate: isDuplicate, isEnding: isEnding)
    }
    return Subscriber(registration: registration)
  }
}
