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
  /// Every publication is delivered, changed or not; to skip states equal to
  /// the previous one, use ``observe(_:buffering:)`` with `{ $0 }` on an
  /// `Equatable` state.
  ///
  /// - Parameter policy: `.latest` (default) lets a slow observer skip to the
  ///   newest state; `.all` delivers the state after every action, in order.
  /// - Important: The observer is registered when this returns, so no state
  ///   published afterwards is missed. After ``shutdown(_:)`` the stream yields
  ///   the final state and ends.
  @inlinable
  public func states(buffering policy: BufferingPolicy = .latest) -> CoreStream<State> {
    register(select: { $0 }, isDuplicate: nil, policy: policy)
  }

  /// The part of the state `select` picks, for `for await`: its current
  /// value first, then each value that differs from the one before.
  ///
  /// ```swift
  /// for await count in await core.observe(\.count) {
  ///   label.text = "\(count)"
  /// }
  /// ```
  ///
  /// The selector and the comparison run inside the core, so the consuming
  /// task is woken only when its value changed.
  ///
  /// - Parameters:
  ///   - select: Picks the observed value from the state: a key path or a
  ///     closure. Runs inside the core; keep it cheap and free of side effects.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  @inlinable
  public func observe<Props: Sendable & Equatable>(
    _ select: @escaping @Sendable (State) -> Props,
    buffering policy: BufferingPolicy = .latest
  ) -> CoreStream<Props> {
    register(select: select, isDuplicate: { $0 == $1 }, policy: policy)
  }

  /// The part of the state `select` picks, skipping values that
  /// `isDuplicate` says equal the previous one.
  ///
  /// ```swift
  /// for await user in await core.observe(\.user, removeDuplicates: { $0.id == $1.id }) {
  ///   showProfile(user)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - select: Picks the observed value; runs inside the core.
  ///   - isDuplicate: Returns `true` when the second value (new) should not be
  ///     delivered after the first (the last one delivered); runs inside the core.
  ///   - policy: `.latest` (default) or `.all`; see ``BufferingPolicy``.
  @inlinable
  public func observe<Props: Sendable>(
    _ select: @escaping @Sendable (State) -> Props,
    removeDuplicates isDuplicate: @escaping @Sendable (Props, Props) -> Bool,
    buffering policy: BufferingPolicy = .latest
  ) -> CoreStream<Props> {
    register(select: select, isDuplicate: isDuplicate, policy: policy)
  }

  /// The part of the state `select` picks, delivered on every publication:
  /// for values that are not `Equatable`.
  ///
  /// ```swift
  /// for await snapshot in await core.observe(\.image) { show(snapshot) }
  /// ```
  @inlinable
  public func observe<Props: Sendable>(
    _ select: @escaping @Sendable (State) -> Props,
    buffering policy: BufferingPolicy = .latest
  ) -> CoreStream<Props> {
    register(select: select, isDuplicate: nil, policy: policy)
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
  /// is the first action reduced after this call. While any such observer is
  /// registered, the core copies the state before each action.
  ///
  /// - Parameter policy: `.all` (default) delivers every action; `.latest`
  ///   keeps only the newest record for a slow observer.
  public func actions(
    buffering policy: BufferingPolicy = .all
  ) -> CoreStream<ActionRecord<State, Action>> {
    flushMailbox()
    removeEndedObservers()
    let cell = ObserverCell<ActionRecord<State, Action>>(policy: policy, counter: observerCounter)
    if isStopped {
      cell.finish()
    } else {
      actionCells.append(cell)
      hasObservers = true
    }
    return CoreStream(cell: cell)
  }

  /// The number of registered observers, of states, selections and actions.
  ///
  /// An observer counts from the moment ``states(buffering:)``,
  /// ``observe(_:buffering:)`` or ``actions(buffering:)`` returns until its
  /// loop ends (or its stream is released un-iterated) or the core shuts down.
  ///
  /// ```swift
  /// consumer.cancel()
  /// await consumer.value
  /// #expect(core.observerCount == 0)
  /// ```
  @inlinable
  public nonisolated var observerCount: Int {
    observerCounter.value.load(ordering: .relaxed)
  }

  @inlinable
  func register<Props: Sendable>(
    select: @escaping @Sendable (State) -> Props,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?,
    policy: BufferingPolicy
  ) -> CoreStream<Props> {
    // The current state includes every action accepted before this call.
    checkNotReducing()
    flushMailbox()
    removeEndedObservers()
    let cell = ObserverCell<Props>(policy: policy, counter: observerCounter)
    let subscription = Subscription(cell: cell, select: select, isDuplicate: isDuplicate)
    subscription.publish(currentState)
    if isStopped {
      cell.finish()
    } else {
      switch policy {
      case .latest: latestSubscriptions.append(subscription)
      case .all: everyStateSubscriptions.append(subscription)
      }
      hasObservers = true
    }
    return CoreStream(cell: cell)
  }

  /// Drops observers whose consumers have ended. They were already counted
  /// out and are never delivered to; this frees their storage. Costs one
  /// atomic load when nobody has left.
  @inlinable
  func removeEndedObservers() {
    let registered = latestSubscriptions.count + everyStateSubscriptions.count + actionCells.count
    guard registered != observerCount else { return }
    latestSubscriptions.removeAll { !$0.lifetime.isActive }
    everyStateSubscriptions.removeAll { !$0.lifetime.isActive }
    actionCells.removeAll { !$0.isActive }
    hasObservers = !(latestSubscriptions.isEmpty && everyStateSubscriptions.isEmpty && actionCells.isEmpty)
  }

  /// Ends every observer's loop after what it has not taken yet.
  func finishObservers() {
    for subscription in latestSubscriptions { subscription.lifetime.finish() }
    for subscription in everyStateSubscriptions { subscription.lifetime.finish() }
    for cell in actionCells { cell.finish() }
    latestSubscriptions = []
    everyStateSubscriptions = []
    actionCells = []
    hasObservers = false
  }
}
