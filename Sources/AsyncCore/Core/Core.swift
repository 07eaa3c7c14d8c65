import Synchronization

/// A store that owns one state, reduces actions into it one at a time, and
/// publishes the result to observers.
///
/// Actions come in from any task: ``send(_:)`` queues one and returns at once,
/// ``dispatch(_:)`` returns after it has been reduced. The reducer runs
/// synchronously inside the actor, so it never races with itself and never
/// waits. State goes out to observers that consume it with `for await`
/// (see ``states(removeDuplicates:buffering:)`` and
/// ``observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)``).
///
/// ```swift
/// struct Counter: Sendable { var count = 0 }
/// enum CounterAction: Sendable { case increment, decrement }
///
/// let core = Core(initialState: Counter(), reducer: Reduce<Counter, CounterAction> { state, action in
///   switch action {
///   case .increment: state.count += 1
///   case .decrement: state.count -= 1
///   }
/// })
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
  @usableFromInline @exclusivity(unchecked) var currentState: State
  /// `true` while user code runs inside the core: the reducer (the only
  /// code that holds an `inout` access to the state), selectors and
  /// `removeDuplicates:` closures. Every way back into the core checks it,
  /// so such code that reaches its own core (through `assumeIsolated`)
  /// stops with a message instead of touching state mid-change.
  @usableFromInline @exclusivity(unchecked) var isRunningUserCode = false
  /// The reducer's body: a pure one (a `Reduce` made from a closure that
  /// returns nothing, or combined or scoped from such) reduces batches in
  /// one tight loop and never builds, copies or destroys an `Effect` (see
  /// `reduceBatch`).
  @usableFromInline let reducer: Reduce<State, Action>.Body
  /// What the core accepts, for every gate (see `LifecyclePhase`).
  @usableFromInline let lifecycle: Lifecycle
  /// Actions accepted by `send` or sent by effects, not reduced yet.
  @usableFromInline let mailbox: Mailbox<Envelope<Action>>
  /// What the drain took from the mailbox beyond a slice, older than all
  /// the mailbox holds: reduced first, by the drain a slice at a time and by
  /// every flush whole (see `reducePending`).
  @usableFromInline @exclusivity(unchecked) var backlog = MailboxBacklog<Envelope<Action>>()
  /// Actions that `.send` effects returned while reducing, reduced next,
  /// first in, first out, before anything else (see `reduce`).
  @usableFromInline @exclusivity(unchecked) var followUps: [Action] = []
  // Safety (for every `@exclusivity(unchecked)` property of the core): each
  // is touched only by the core's own synchronous code. No access spans a
  // call into user code (selectors and comparisons get values or copies;
  // the mutating methods of `observers` call none) except the reducer's
  // `inout` to `currentState`, and while user code
  // runs `isRunningUserCode` makes every way back into the core (`state`,
  // `dispatch`, registering observers) stop with a message. So no two
  // accesses overlap, and the dynamic check (~80-140 instructions per
  // access with its thread-local lookup) could only ever pass.

  /// The number of observers and subscribers, shared with them (and read
  /// from outside the core: metrics, handles, bridges) so that one ending
  /// on the consumer's side is counted out at once.
  @usableFromInline let observerCounter = ObserverCounter()
  /// Observers and subscribers (see Observation/ObserverRegistry.swift).
  // Safety (`nonisolated(unsafe)`): the registry is touched only by the
  // core's own isolated, synchronous code, and by `deinit`, which holds the
  // only reference to the core; it is not `Sendable` so that it never leaves
  // the core. The annotation is only what lets the (nonisolated) `deinit`
  // end the observers: a nonisolated deinit may not read a non-`Sendable`
  // property, and an isolated one needs a newer runtime than the platforms
  // this package supports.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var observers = ObserverRegistry<State, Action>()
  /// What the drain does next, and the publication window `dispatch` shares
  /// with it (see DrainStateMachine.swift).
  @usableFromInline @exclusivity(unchecked) var drainMachine = DrainStateMachine(slice: Core.drainSlice)
  /// Whether any middleware is installed: the one flag the reducing paths
  /// read, so a core without middleware pays nothing more (see
  /// Middleware/Core+Middleware.swift). Beside the other flags, in the
  /// same word.
  @usableFromInline @exclusivity(unchecked) var hasMiddleware = false
  /// An emptied buffer whose capacity the drain's next take reuses (see
  /// `Mailbox.takeBatch`). Here, not in the mailbox, as the counters
  /// below: only the core writes them, and the mailbox's memory is what
  /// every sender writes. (And here, among the fields only the core
  /// touches, not beside `lifecycle` and `mailbox`, which every sender and
  /// effect reads: a count stored on each dispatch there would share their
  /// cache line.)
  @usableFromInline @exclusivity(unchecked) var spareBatch: [Envelope<Action>] = []
  /// The actions reduced and the drain's slices, for ``metrics``: written
  /// only by the core (a load and a store, no read-modify-write), read by
  /// anyone.
  @usableFromInline let reducedCount = Atomic<Int>(0)
  @usableFromInline let sliceCount = Atomic<Int>(0)

  // Effects (see Core+Effects.swift).
  /// The clock effects read through ``Send/clock``.
  ///
  /// ```swift
  /// // A poller beside the core, on the same time as its effects (a test's ManualClock):
  /// while !core.hasShutDown {
  ///   try await core.clock.sleep(for: .seconds(30))
  ///   core.send(.poll)
  /// }
  /// ```
  public nonisolated let clock: any Clock<Duration>
  /// What effects read through ``Send/dependencies`` (see
  /// ``updateDependencies(_:)``).
  var currentDependencies: Dependencies
  nonisolated let diagnostics: @Sendable (EffectFailure) -> Void
  let effects: EffectRegistry
  let effectQueue: EffectQueue
  /// The runner the core started when no ``run()`` consumes its effects.
  var effectRunner: Task<Void, Never>?
  /// What the core's effects need from it, made on the first effect.
  @usableFromInline var effectContext: EffectContext<Action>?

  // Scoped handles (see Core+Scope.swift).
  /// What handles to children that can leave the state need (beside the
  /// ending entries of `observers`), made with the first of them: a core
  /// without any pays a pointer.
  @usableFromInline @exclusivity(unchecked) var scopeBook: ScopeBook<State>?

  // Middleware (see Middleware/Core+Middleware.swift).
  /// The middleware in the order added; `nil` when there is none.
  @usableFromInline @exclusivity(unchecked) var middlewareChain: MiddlewareChain<State, Action>?

  /// A durable core's journal (see Core+Journal.swift); `nil` for none.
  @usableFromInline @exclusivity(unchecked) var journal: JournalDriver<State, Action>?

  /// Creates a core holding `initialState` and reducing actions with
  /// `reducer`.
  ///
  /// ```swift
  /// let counter = Reduce<Counter, CounterAction> { state, action in
  ///   switch action {
  ///   case .increment: state.count += 1
  ///   case .decrement: state.count -= 1
  ///   }
  /// }
  /// let core = Core(initialState: Counter(), reducer: counter)
  /// ```
  ///
  /// A reducer that starts no effects (`Reduce { state, action in … }`
  /// with no `return`, or a ``Reduce/combine(_:)`` of such reducers) runs on
  /// the core's pure fast path: batches of sent actions are reduced in one
  /// tight loop, and no ``Effect`` is built.
  ///
  /// - Parameters:
  ///   - initialState: The state the core starts with.
  ///   - dependencies: The workers effects use (``Send/dependencies``); a
  ///     test passes fakes. None by default.
  ///   - clock: The clock effects read time from (``Send/clock``); a test
  ///     passes one it can drive (`ManualClock`, in AsyncCoreTesting).
  ///   - mailboxCapacity: The most actions from outside the mailbox holds
  ///     before they are reduced; `nil` (the default) for no bound. When
  ///     it is full, ``send(_:)`` returns ``SendResult/mailboxFull`` and
  ///     ``enqueue(_:)`` waits for room (see <doc:Services>). Must be at
  ///     least 1.
  ///   - diagnostics: Receives errors thrown by effects that have no
  ///     `catch:` handler. By default they are written to standard error.
  ///   - reducer: Reduces each action into the state, in place, and returns
  ///     the effects to run (see ``Reduce``).
  public init(
    initialState: State,
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    mailboxCapacity: Int? = nil,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    reducer: Reduce<State, Action>
  ) {
    if let mailboxCapacity, mailboxCapacity < 1 {
      programmerError("Core(mailboxCapacity: \(mailboxCapacity)): a capacity must be at least 1, or nil for no bound")
    }
    self.currentState = initialState
    self.reducer = reducer.body
    self.currentDependencies = dependencies
    self.clock = clock
    self.diagnostics = diagnostics
    let lifecycle = Lifecycle()
    self.lifecycle = lifecycle
    self.mailbox = Mailbox(lifecycle: lifecycle, capacity: mailboxCapacity ?? .max)
    self.effects = EffectRegistry(lifecycle: lifecycle)
    self.effectQueue = EffectQueue(lifecycle: lifecycle)
  }

  /// Creates a core holding `initialState` and reducing actions with the
  /// closure `reducer`, which returns the effects to run.
  ///
  /// ```swift
  /// let core = Core<Timer, TimerAction>(
  ///   initialState: Timer(),
  ///   dependencies: Dependencies { $0.ticker = LiveTicker() },
  ///   clock: clock
  /// ) { state, action in
  ///   switch action {
  ///   case .start:
  ///     return .run { send in
  ///       try await send.clock.sleep(for: .seconds(1))
  ///       await send.dependencies.ticker.tick()
  ///       await send(.tick)
  ///     }
  ///   case .tick:
  ///     state.ticks += 1
  ///     return .none
  ///   }
  /// }
  /// ```
  ///
  /// The same as passing `Reduce(reducer)`; a reducer that starts no
  /// effects is written `reducer: Reduce { state, action in … }`, which the
  /// core runs on its pure fast path.
  ///
  /// - Parameters:
  ///   - initialState: The state the core starts with.
  ///   - dependencies: The workers effects use (``Send/dependencies``); a
  ///     test passes fakes. None by default.
  ///   - clock: The clock effects read time from (``Send/clock``); a test
  ///     passes one it can drive (`ManualClock`, in AsyncCoreTesting).
  ///   - mailboxCapacity: The most actions from outside the mailbox holds;
  ///     `nil` (the default) for no bound (see the other initializer).
  ///   - diagnostics: Receives errors thrown by effects that have no
  ///     `catch:` handler.
  ///   - reducer: Reduces each action into the state, in place, and returns
  ///     the effects to run (``Effect/none`` for none).
  public init(
    initialState: State,
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    mailboxCapacity: Int? = nil,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    reducer: @escaping @Sendable (_ state: inout State, _ action: Action) -> Effect<Action>
  ) {
    self.init(
      initialState: initialState, dependencies: dependencies, clock: clock, mailboxCapacity: mailboxCapacity,
      diagnostics: diagnostics, reducer: Reduce(reducer))
  }

  deinit {
    // No drain task is running (one would be holding the core), so the
    // mailbox is empty. Effects must not outlive their core: stop accepting,
    // cancel them (what they send from now on is refused), and account for
    // jobs nobody will run, so no `EffectHandle.finish()` waits forever.
    _ = lifecycle.stop()
    effects.cancelAll()
    for job in effectQueue.stop() { job.abandon() }
    effectRunner?.cancel()
    // Observers' loops must not stay suspended forever: end them after what
    // they have not taken yet. (The deinit has the only reference, so it may
    // touch the isolated storage directly.)
    observers.finishAll()
  }

  // MARK: - State

  /// The current state.
  ///
  /// ```swift
  /// core.send(.increment)
  /// let count = await core.state.count   // includes the increment
  /// ```
  ///
  /// - Important: Every action the core accepted before this call, from any
  ///   task, is reduced before the state is read: a task reads its own
  ///   writes, and those of the tasks it awaited. So the read waits for the
  ///   queue, however long: while producers outrun the reducer on an
  ///   unbounded mailbox, that wait grows with the queue. A `mailboxCapacity`
  ///   bounds it (see <doc:Services>).
  ///   On a durable core (see ``init(initialState:journal:dependencies:clock:mailboxCapacity:diagnostics:reducer:)``)
  ///   it also waits until they are journaled.
  @inlinable
  public var state: State {
    get async {
      checkNotRunningUserCode()
      if journal != nil {
        await awaitJournalPosition()
      } else {
        flushMailbox()
      }
      return currentState
    }
  }
}
