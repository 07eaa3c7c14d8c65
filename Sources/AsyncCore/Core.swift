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
/// A reducer may also return an ``Effect``: work the core runs as a child task
/// after the reducer returns, which sends actions back (see ``Effect``).
///
/// - Important: Actions are reduced in the order each task sent them, whether
///   through `send`, `dispatch` or both. An action the core accepted is always
///   reduced; one it refuses (once ``shutdown(_:)`` has begun) is reported to
///   its sender.
public final actor Core<State: Sendable, Action: Sendable> {
  /// Reduces one action into the state, in place, and returns the effects
  /// to run afterwards (``Effect/none`` for none).
  ///
  /// It runs inside the core, one action at a time, and must not block.
  public typealias Reducer = @Sendable (_ state: inout State, _ action: Action) -> Effect<Action>

  @usableFromInline @exclusivity(unchecked) var currentState: State
  /// `true` while a reducer runs: the only time user code holds an `inout`
  /// access to the state. Every way back into the core checks it, so a
  /// reducer that reaches its own core (through `assumeIsolated`) stops with
  /// a message instead of touching the state it is mutating.
  @usableFromInline @exclusivity(unchecked) var isReducing = false
  /// The reducer, kept apart when it starts no effects: reducing with it
  /// then never builds, copies or destroys an `Effect`.
  @usableFromInline
  enum ReducerBody: Sendable {
    case pure(@Sendable (_ state: inout State, _ action: Action) -> Void)
    case effectful(Reducer)
  }

  @usableFromInline let reducer: ReducerBody
  /// Actions accepted by `send` or sent by effects, not reduced yet.
  @usableFromInline let mailbox = Locked(MailboxStateMachine<Envelope<Action>>())
  /// Whether the mailbox holds actions, kept under the mailbox's lock and
  /// read without it, so `dispatch` and `state` skip the lock when nothing
  /// was sent. A send by the same task happens before the read and is seen;
  /// a concurrent one is not ordered before the read in any case.
  @usableFromInline let mailboxHasActions = Atomic<Bool>(false)
  // Safety (for every `@exclusivity(unchecked)` property of the core): each
  // is touched only by the core's own synchronous code. No access spans a
  // call into user code (selectors and comparisons get values or copies)
  // except the reducer's `inout` to `currentState`, and while it runs
  // `isReducing` makes every way back into the core (`state`, reducing,
  // registering observers) stop at a precondition. So no two accesses
  // overlap, and the dynamic check (~80-140 instructions per access with its
  // thread-local lookup) could only ever pass.

  /// The buffer a batch is drained into; kept to reuse its capacity.
  @usableFromInline @exclusivity(unchecked) var batch: [Envelope<Action>] = []
  /// `false` from the instant `shutdown` is called: `dispatch` throws.
  @usableFromInline let acceptsActions = Atomic<Bool>(true)
  var lifecycle = Lifecycle.running

  // Observers, by what they are published: the latest-value ones once per
  // drained batch, the every-state ones and the action log once per action.
  @usableFromInline let observerCounter = ObserverCounter()
  @usableFromInline @exclusivity(unchecked) var latestSubscriptions: [Subscription<State>] = []
  @usableFromInline @exclusivity(unchecked) var everyStateSubscriptions: [Subscription<State>] = []
  @usableFromInline @exclusivity(unchecked) var actionCells: [ObserverCell<ActionRecord<State, Action>>] = []
  /// Whether any of the three lists is non-empty: a core without observers
  /// reads this one flag instead of three lists.
  @usableFromInline @exclusivity(unchecked) var hasObservers = false

  // Effects (see Core+Effects.swift).
  /// The clock effects read through ``Send/clock``.
  public nonisolated let clock: any Clock<Duration>
  nonisolated let diagnostics: @Sendable (EffectFailure) -> Void
  @usableFromInline let effects = EffectRegistry()
  let effectQueue = EffectQueue()
  /// The runner the core started when no ``run()`` consumes its effects.
  var effectRunner: Task<Void, Never>?
  /// How effects' `send` reaches the core without keeping it alive.
  var reference: CoreReference<State, Action>?
  var shutdownWaiters: [CheckedContinuation<Void, Never>] = []

  /// Creates a core holding `initialState` and reducing actions with
  /// `reducer`, which may return effects.
  ///
  /// ```swift
  /// let core = Core<Timer, TimerAction>(initialState: Timer(), clock: clock) { state, action in
  ///   switch action {
  ///   case .start:
  ///     return .run { send in
  ///       try await send.clock.sleep(for: .seconds(1))
  ///       await send(.tick)
  ///     }
  ///   case .tick:
  ///     state.ticks += 1
  ///     return .none
  ///   }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - clock: The clock effects read time from (``Send/clock``); a test
  ///     passes one it can drive.
  ///   - diagnostics: Receives errors thrown by effects that have no
  ///     `catch:` handler. By default they are written to standard error.
  // Disfavoured: a multi-statement closure with no `return` type-checks
  // against both initializers, and without this would be ambiguous; a
  // closure that returns effects still only fits this one.
  @_disfavoredOverload
  public init(
    initialState: State,
    clock: any Clock<Duration> = ContinuousClock(),
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    reducer: @escaping Reducer
  ) {
    self.init(initialState: initialState, clock: clock, diagnostics: diagnostics, body: .effectful(reducer))
  }

  /// Creates a core whose reducer starts no effects.
  ///
  /// ```swift
  /// let core = Core<Counter, CounterAction>(initialState: Counter()) { state, action in
  ///   if case .increment = action { state.count += 1 }
  /// }
  /// ```
  public init(
    initialState: State,
    clock: any Clock<Duration> = ContinuousClock(),
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    reducer: @escaping @Sendable (_ state: inout State, _ action: Action) -> Void
  ) {
    self.init(initialState: initialState, clock: clock, diagnostics: diagnostics, body: .pure(reducer))
  }

  private init(
    initialState: State,
    clock: any Clock<Duration>,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void,
    body: ReducerBody
  ) {
    self.currentState = initialState
    self.reducer = body
    self.clock = clock
    self.diagnostics = diagnostics
  }

  deinit {
    // No drain task is running (one would be holding the core), so the
    // mailbox is empty. Effects must not outlive their core: cancel them;
    // what they send from now on is refused. Jobs nobody will run are
    // accounted for, so no `EffectHandle.finish()` waits forever.
    effects.close()
    effects.cancelAll()
    for job in effectQueue.finish() { job.abandon() }
    effectRunner?.cancel()
    // Observers' loops must not stay suspended forever: end them after what
    // they have not taken yet. (The deinit has the only reference, so it may
    // touch the isolated storage directly.)
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
    checkNotReducing()
    flushMailbox()
    return currentState
  }

  // MARK: - Dispatch

  /// Reduces `action` and returns once the new state is published, with a
  /// handle to await the effects it started.
  ///
  /// ```swift
  /// try await core.dispatch(.increment)
  /// try await core.dispatch(.refresh).finish()  // and wait for its effects
  /// ```
  ///
  /// Actions this task passed to ``send(_:)`` earlier are reduced first.
  ///
  /// - Throws: ``CoreError/shutDown`` once the core has begun to shut down;
  ///   the action was not reduced.
  @inlinable
  @discardableResult
  public func dispatch(_ action: Action) throws(CoreError) -> EffectHandle {
    guard acceptsActions.load(ordering: .relaxed) else { throw .shutDown }
    reducePending()
    var lineage: Lineage?
    reduce(action, lineage: &lineage)
    publishBatch()
    return EffectHandle(lineage: lineage)
  }

  /// Reduces `actions` in order, in one hop to the core, and publishes once.
  ///
  /// ```swift
  /// try await core.dispatch(contentsOf: [.increment, .increment, .decrement])
  /// ```
  ///
  /// Latest-value observers see one update for the whole batch; every-state
  /// observers and ``actions(buffering:)`` see each action. The handle
  /// covers the effects of all of them.
  ///
  /// - Throws: ``CoreError/shutDown`` once the core has begun to shut down;
  ///   none of the actions was reduced.
  @inlinable
  @discardableResult
  public func dispatch(contentsOf actions: some Sequence<Action>) throws(CoreError) -> EffectHandle {
    guard acceptsActions.load(ordering: .relaxed) else { throw .shutDown }
    reducePending()
    var lineage: Lineage?
    for action in actions { reduce(action, lineage: &lineage) }
    publishBatch()
    return EffectHandle(lineage: lineage)
  }

  /// Queues `action` to be reduced and returns at once, from any context,
  /// synchronous code included.
  ///
  /// ```swift
  /// button.onTap = { core.send(.increment) }
  /// ```
  ///
  /// - Returns: `true` if the core accepted the action; it will be reduced.
  ///   `false` if the core has begun to shut down; the action was not accepted.
  /// - Important: Actions sent from one task are reduced in the order sent,
  ///   and an accepted action is never dropped. The queue is unbounded: a
  ///   producer that outruns the reducer for long grows it.
  @inlinable
  @discardableResult
  public nonisolated func send(_ action: Action) -> Bool {
    handle(enqueue { $0.send(Envelope(action: action, lineage: nil), fromEffect: false) })
  }

  /// Queues `actions`, in order, with one lock and at most one wake-up.
  ///
  /// ```swift
  /// core.send(contentsOf: [.increment, .increment])
  /// ```
  ///
  /// - Returns: `true` if the core accepted the actions, `false` if it has
  ///   begun to shut down and accepted none of them.
  @inlinable
  @discardableResult
  public nonisolated func send(contentsOf actions: some Sequence<Action>) -> Bool {
    // Iterate the caller's sequence before taking the lock.
    let envelopes = actions.map { Envelope(action: $0, lineage: nil) }
    return handle(enqueue { $0.send(contentsOf: envelopes) })
  }

  /// Puts what `send` gives into the mailbox, keeping `mailboxHasActions`
  /// in step under the same lock.
  @inlinable
  nonisolated func enqueue(
    _ send: (inout MailboxStateMachine<Envelope<Action>>) -> MailboxStateMachine<Envelope<Action>>.SendAction
  ) -> MailboxStateMachine<Envelope<Action>>.SendAction {
    mailbox.withLock { mailbox in
      let action = send(&mailbox)
      if action != .rejected { mailboxHasActions.store(true, ordering: .releasing) }
      return action
    }
  }

  @inlinable
  nonisolated func handle(_ action: MailboxStateMachine<Envelope<Action>>.SendAction) -> Bool {
    switch action {
    case .enqueued:
      return true
    case .startDrain:
      // The one unstructured task at the core's boundary for actions. It
      // holds the core until the mailbox is empty, so accepted actions
      // outlive the caller's reference to the core.
      Task { await self.drain() }
      return true
    case .rejected:
      return false
    }
  }

  /// Whether ``shutdown(_:)`` has been called: from that instant the core
  /// refuses actions from outside.
  public nonisolated var hasShutDown: Bool { !acceptsActions.load(ordering: .relaxed) }
}
