import Synchronization

/// A store that owns one state, reduces actions into it one at a time, and
/// publishes the result to observers.
///
/// Actions come in from any task: ``send(_:)`` queues one and returns at once,
/// ``dispatch(_:)`` returns after it has been reduced. The reducer runs
/// synchronously inside the actor, so it never races with itself and never
/// waits. State goes out to observers that consume it with `for await`
/// (see ``states(buffering:)`` and ``observe(_:buffering:)``).
///
/// ```swift
/// struct Counter: Sendable { var count = 0 }
/// enum CounterAction: Sendable { case increment, decrement }
///
/// let core = Core<Counter, CounterAction>(initialState: Counter()) { state, action in
///   switch action {
///   case .increment: state.count += 1
///   case .decrement: state.count -= 1
///   }
/// }
///
/// core.send(.increment)              // from synchronous code, returns at once
/// try await core.dispatch(.increment) // returns once reduced
/// print(await core.state.count)       // 2
/// ```
///
/// - Important: Actions are reduced in the order each task sent them, whether
///   through `send`, `dispatch` or both. An action the core accepted is always
///   reduced; one it refuses (after ``shutdown()``) is reported to its sender.
public final actor Core<State: Sendable, Action: Sendable> {
  /// Reduces one action into the state, in place.
  ///
  /// It runs inside the core, one action at a time, and must not block.
  public typealias Reducer = @Sendable (_ state: inout State, _ action: Action) -> Void

  @usableFromInline private(set) var currentState: State
  @usableFromInline let reducer: Reducer
  /// Actions accepted by `send` and not reduced yet.
  @usableFromInline let mailbox = Locked(MailboxStateMachine<Action>())
  /// The buffer a batch is drained into; kept to reuse its capacity.
  @usableFromInline var batch: [Action] = []
  @usableFromInline var isShutDown = false

  // Observers, by what they are published: the latest-value ones once per
  // drained batch, the every-state ones and the action log once per action.
  @usableFromInline let observerCounter = ObserverCounter()
  @usableFromInline var latestSubscriptions: [Subscription<State>] = []
  @usableFromInline var everyStateSubscriptions: [Subscription<State>] = []
  @usableFromInline var actionCells: [ObserverCell<ActionRecord<State, Action>>] = []

  /// Creates a core holding `initialState` and reducing actions with `reducer`.
  ///
  /// ```swift
  /// let core = Core<Counter, CounterAction>(initialState: Counter()) { state, action in
  ///   if case .increment = action { state.count += 1 }
  /// }
  /// ```
  public init(initialState: State, reducer: @escaping Reducer) {
    self.currentState = initialState
    self.reducer = reducer
  }

  deinit {
    // No drain task is running (one would be holding the core), so the
    // mailbox is empty. Observers' loops must not stay suspended forever:
    // end them after what they have not taken yet. (The deinit has the only
    // reference, so it may touch the isolated storage directly.)
    for subscription in latestSubscriptions { subscription.lifetime.finish() }
    for subscription in everyStateSubscriptions { subscription.lifetime.finish() }
    for cell in actionCells { cell.finish() }
  }

  // MARK: - State

  /// The current state.
  ///
  /// ```swift
  /// core.send(.increment)
  /// let count = await core.state.count   // includes the increment
  /// ```
  ///
  /// - Important: Actions already accepted by ``send(_:)`` are reduced before
  ///   the state is read, so a task always reads its own writes.
  @inlinable
  public var state: State {
    flushMailbox()
    return currentState
  }

  // MARK: - Dispatch

  /// Reduces `action` and returns once the new state is published.
  ///
  /// ```swift
  /// try await core.dispatch(.increment)
  /// ```
  ///
  /// Actions this task passed to ``send(_:)`` earlier are reduced first.
  ///
  /// - Throws: ``CoreError/shutDown`` if the core has shut down; the action
  ///   was not reduced.
  @inlinable
  public func dispatch(_ action: Action) throws(CoreError) {
    guard !isShutDown else { throw .shutDown }
    reducePending()
    reduce(action)
    publishBatch()
  }

  /// Reduces `actions` in order, in one hop to the core, and publishes once.
  ///
  /// ```swift
  /// try await core.dispatch(contentsOf: [.increment, .increment, .decrement])
  /// ```
  ///
  /// Latest-value observers see one update for the whole batch; every-state
  /// observers and ``actions(buffering:)`` see each action.
  ///
  /// - Throws: ``CoreError/shutDown`` if the core has shut down; none of the
  ///   actions was reduced.
  @inlinable
  public func dispatch(contentsOf actions: some Sequence<Action>) throws(CoreError) {
    guard !isShutDown else { throw .shutDown }
    reducePending()
    for action in actions { reduce(action) }
    publishBatch()
  }

  /// Queues `action` to be reduced and returns at once, from any context,
  /// synchronous code included.
  ///
  /// ```swift
  /// button.onTap = { core.send(.increment) }
  /// ```
  ///
  /// - Returns: `true` if the core accepted the action; it will be reduced.
  ///   `false` if the core has shut down; the action was not accepted.
  /// - Important: Actions sent from one task are reduced in the order sent,
  ///   and an accepted action is never dropped. The queue is unbounded: a
  ///   producer that outruns the reducer for long grows it.
  @discardableResult
  @inlinable
  public nonisolated func send(_ action: Action) -> Bool {
    handle(mailbox.withLock { $0.send(action) })
  }

  /// Queues `actions`, in order, with one lock and at most one wake-up.
  ///
  /// ```swift
  /// core.send(contentsOf: [.increment, .increment])
  /// ```
  ///
  /// - Returns: `true` if the core accepted the actions, `false` if it has
  ///   shut down and accepted none of them.
  @discardableResult
  @inlinable
  public nonisolated func send(contentsOf actions: some Sequence<Action>) -> Bool {
    // Iterate the caller's sequence before taking the lock.
    let actions = Array(actions)
    return handle(mailbox.withLock { $0.send(contentsOf: actions) })
  }

  @inlinable
  nonisolated func handle(_ action: MailboxStateMachine<Action>.SendAction) -> Bool {
    switch action {
    case .enqueued:
      return true
    case .startDrain:
      // The one unstructured task at the core's boundary. It holds the core
      // until the mailbox is empty, so accepted actions outlive the caller's
      // reference to the core.
      Task { await self.drain() }
      return true
    case .rejected:
      return false
    }
  }

  // MARK: - Lifecycle

  /// Stops accepting actions and ends every observer's loop.
  ///
  /// ```swift
  /// await core.shutdown()
  /// core.send(.increment)               // false: not accepted
  /// try await core.dispatch(.increment) // throws CoreError.shutDown
  /// ```
  ///
  /// Actions accepted before the call are reduced and published first;
  /// observers receive the final state, then their loops end. Calling it
  /// again does nothing.
  public func shutdown() {
    guard !isShutDown else { return }
    var remaining = takeBatchBuffer()
    mailbox.withLock { $0.close(into: &remaining) }
    reduceBatch(&remaining)
    publishBatch()
    isShutDown = true
    finishObservers()
  }

  /// Whether ``shutdown()`` has been called.
  public var hasShutDown: Bool { isShutDown }

  // MARK: - Reducing

  /// Runs on the drain task started by `send`: reduces what the mailbox holds,
  /// batch by batch, publishing once per batch, until it is empty.
  @inlinable
  func drain() async {
    var reducedSinceYield = 0
    while true {
      var taken = takeBatchBuffer()
      guard mailbox.withLock({ $0.takeBatch(into: &taken) }) else {
        batch = taken
        return
      }
      reducedSinceYield += taken.count
      reduceBatch(&taken)
      publishBatch()
      if reducedSinceYield >= Self.actionsBetweenYields {
        // Under sustained sends, let callers of `dispatch`, `state` and
        // `observe` waiting on the core run between batches.
        reducedSinceYield = 0
        await Task.yield()
      }
    }
  }

  @inlinable
  static var actionsBetweenYields: Int { 4_096 }

  /// Reduces what `send` accepted, so it precedes what the caller does next.
  @inlinable
  func flushMailbox() {
    if reducePending() { publishBatch() }
  }

  /// Reduces pending sends without publishing to latest-value observers.
  /// Returns whether there were any.
  @inlinable
  @discardableResult
  func reducePending() -> Bool {
    var taken = takeBatchBuffer()
    mailbox.withLock { $0.flush(into: &taken) }
    let hadPending = !taken.isEmpty
    reduceBatch(&taken)
    return hadPending
  }

  /// Reduces `actions` and keeps their emptied buffer for the next batch.
  @inlinable
  func reduceBatch(_ actions: inout [Action]) {
    for action in actions { reduce(action) }
    actions.removeAll(keepingCapacity: true)
    swap(&actions, &batch)
  }

  @inlinable
  func takeBatchBuffer() -> [Action] {
    var taken: [Action] = []
    swap(&taken, &batch)
    return taken
  }

  @inlinable
  func reduce(_ action: Action) {
    if actionCells.isEmpty {
      reducer(&currentState, action)
    } else {
      let before = currentState
      reducer(&currentState, action)
      let record = ActionRecord(action: action, stateBefore: before, stateAfter: currentState)
      for cell in actionCells { cell.deliver(record) }
    }
    for subscription in everyStateSubscriptions { subscription.publish(currentState) }
  }

  /// Publishes the state to latest-value observers: once per batch.
  @inlinable
  func publishBatch() {
    removeEndedObservers()
    for subscription in latestSubscriptions { subscription.publish(currentState) }
  }
}
