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
  /// As ``Core/states(removeDuplicates:buffering:)``: by default a state
  /// equal to the last one delivered is skipped when `State` is
  /// `Equatable`. For a child that can leave the state, the loop ends after
  /// the child's last value.
  ///
  /// - Parameters:
  ///   - isDuplicate: Returns `true` when the second state (new) should not
  ///     be delivered after the first; runs inside the core. `nil`: `==`
  ///     when `State` is `Equatable`.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  @inlinable
  public func states(
    removeDuplicates isDuplicate: (@Sendable (State, State) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<State> {
    let deduplication = Deduplication(isDuplicate)
    return await observeChild(
      select: { $0 }, keyPath: deduplication.sharing(\State.self), isDuplicate: deduplication.isDuplicate,
      policy: policy)
  }

  /// The value at `keyPath` in the child's state, for `for await`: its
  /// current value first, then each value that differs from the one before.
  ///
  /// ```swift
  /// for await count in await counterHandle.observe(\.count) { label.text = "\(count)" }
  /// for await user in await profile.observe(\.user, removeDuplicates: { $0.id == $1.id }) { show(user) }
  /// ```
  ///
  /// As ``Core/observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)``:
  /// for a child that is always there, observers of the same `Equatable`
  /// value with the default comparison, through the core or any handle,
  /// share one read and one `==` per publication (plus one for each observer
  /// whose consumer has not taken the value before).
  ///
  /// - Parameters:
  ///   - keyPath: The observed value's place in the child's state.
  ///   - isDuplicate: Returns `true` when the second value (new) should not
  ///     be delivered after the first; runs inside the core. `nil`: `==`
  ///     when `Props` is `Equatable`.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  @inlinable
  public func observe<Props: Sendable>(
    _ keyPath: KeyPath<State, Props> & Sendable,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<Props> {
    let deduplication = Deduplication(isDuplicate)
    return await observeChild(
      select: selector(keyPath), keyPath: deduplication.sharing(keyPath), isDuplicate: deduplication.isDuplicate,
      policy: policy)
  }

  /// The part of the child's state `select` picks, for `for await`.
  ///
  /// ```swift
  /// for await isEven in await counterHandle.observe({ $0.count % 2 == 0 }) { print(isEven) }
  /// ```
  ///
  /// As ``Core/observe(_:removeDuplicates:buffering:)-((State)->Props,_,_)``.
  ///
  /// - Parameters:
  ///   - select: Picks the observed value; runs inside the core.
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
    await observeChild(
      select: select, keyPath: nil, isDuplicate: Deduplication(isDuplicate).isDuplicate, policy: policy)
  }

  // MARK: - Synchronous subscribers

  /// Calls `body` inside the core with the value at `keyPath` in the child's
  /// state: at once, then after each publication in which it changed.
  ///
  /// ```swift
  /// let subscriber = await counterHandle.subscribe(to: \.count) { count in label.text = "\(count)" }
  /// ```
  ///
  /// As ``Core/subscribe(to:removeDuplicates:buffering:_:)-(KeyPath<State,Props>Sendable,_,_,_)``.
  /// For a child that can leave the state, the subscription ends with it.
  ///
  /// - Parameters:
  ///   - keyPath: The value's place in the child's state.
  ///   - isDuplicate: Returns `true` when the second value (new) should not
  ///     be passed after the first; runs inside the core. `nil`: `==` when
  ///     `Props` is `Equatable`.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  ///   - body: Runs inside the core, synchronously, one call at a time.
  @inlinable
  public func subscribe<Props: Sendable>(
    to keyPath: KeyPath<State, Props> & Sendable,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    let deduplication = Deduplication(isDuplicate)
    return await subscribeChild(
      select: selector(keyPath), keyPath: deduplication.sharing(keyPath), isDuplicate: deduplication.isDuplicate,
      policy: policy, body: body)
  }

  /// Calls `body` inside the core with the part of the child's state
  /// `select` picks, when it changed.
  ///
  /// ```swift
  /// let subscriber = await counterHandle.subscribe(to: { $0.count > 9 }) { isBig in badge.isHidden = !isBig }
  /// ```
  ///
  /// As ``Core/subscribe(to:removeDuplicates:buffering:_:)-((State)->Props,_,_,_)``.
  ///
  /// - Parameters:
  ///   - select: Picks the value; runs inside the core.
  ///   - isDuplicate: Returns `true` when the second value (new) should not
  ///     be passed after the first; runs inside the core. `nil`: `==` when
  ///     `Props` is `Equatable`.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  ///   - body: Runs inside the core, synchronously, one call at a time.
  @inlinable
  public func subscribe<Props: Sendable>(
    to select: @escaping @Sendable (State) -> Props,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    await subscribeChild(
      select: select, keyPath: nil, isDuplicate: Deduplication(isDuplicate).isDuplicate, policy: policy, body: body)
  }

  // MARK: - Scoping further

  /// A handle on the part of this child's state at `state`; see
  /// ``Core/scope(state:action:)->ScopedCore<ChildState,ChildAction>``.
  ///
  /// ```swift
  /// let header = profile.scope(state: \.header, action: ProfileAction.headerCase)
  /// ```
  public func scope<ChildState: Sendable, ChildAction: Sendable>(
    state: KeyPath<State, ChildState> & Sendable,
    action: ActionCase<Action, ChildAction>
  ) -> ScopedCore<ChildState, ChildAction> {
    fixedChild(state: state, embed: action.embed)
  }

  /// A handle on the optional child at `state`, or `nil` if it is `nil` now
  /// or this handle's child is gone; see
  /// ``Core/scope(state:action:)->ScopedCore<ChildState,ChildAction>?``.
  ///
  /// ```swift
  /// if let editor = await profile.scope(state: \.editor, action: ProfileAction.editorCase) { … }
  /// ```
  public func scope<ChildState: Sendable, ChildAction: Sendable>(
    state: KeyPath<State, ChildState?> & Sendable,
    action: ActionCase<Action, ChildAction>
  ) async -> ScopedCore<ChildState, ChildAction>? {
    await child(
      step: .optional(state), get: { $0[keyPath: state] }, embed: action.embed, api: #function)
  }

  /// A handle on the element with `id` of the collection at `state` in this
  /// child's state, or `nil` if there is none now; see
  /// ``Core/scope(state:id:action:)``.
  ///
  /// ```swift
  /// if let row = await list.scope(state: \.rows, id: 7, action: ListAction.rowCase) { row.send(.toggle) }
  /// ```
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
    return await child(
      step: .element(state, id: id), get: { finder.element(in: $0) },
      embed: { embed((id, $0)) }, api: #function)
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
      .scoped(observer, joining: existing, select: select, isDuplicate: isDuplicate, isEnding: isEnding)
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
      .scoped(member, joining: existing, select: select, isDuplicate: isDuplicate, isEnding: isEnding)
    }
    return Subscriber(registration: registration)
  }
}
