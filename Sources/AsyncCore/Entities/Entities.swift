/// A registry of cores, one per id: each entity is an ordinary ``Core``,
/// activated on its first use and, with a store, passivated when idle.
///
/// A service holds one state per user, cart or order, most of them idle.
/// Address each by its id; the registry makes its core when needed, from
/// what the store holds of it, and stores and releases it when it is idle:
///
/// ```swift
/// import AsyncCoreSQLite
///
/// let store = try SQLiteEntityStore<String, Cart, CartAction>(path: "carts.sqlite")
/// let carts = Entities(
///   store: store, passivation: Passivation(idleAfter: .seconds(300), maxActive: 100_000),
///   initialState: { Cart(owner: $0) }, reducer: cartReducer)
///
/// try await carts.dispatch(.add("tea"), to: "ada")     // activates "ada" if it is passive
/// let cart = try await carts.state(of: "ada")
/// await carts.shutdown()                               // stores every active entity
/// ```
///
/// Each entity's core has the registry's reducer, dependencies, clock,
/// mailbox capacity and diagnostics handler; `prepare` adds what else it
/// needs (middleware, subscribers) when it activates, and
/// ``withCore(_:_:)`` reaches all the rest (scopes, `record`, `sync`).
///
/// - Important: Nothing is lost or reordered by passivation. What is sent
///   to an entity while it activates or passivates waits in the registry,
///   and its next activation reduces it first, in the order sent; a task
///   reads its own writes across a passivation. An entity in use is never
///   passivated (see ``Passivation``): a `for await` observer keeps its
///   entity active until its loop ends, and its stream ends only when the
///   registry shuts down.
///
/// A caller of `enqueue`, `dispatch`, `state(of:)`, `observe` or
/// `withCore` that waits for its entity to activate or passivate leaves at
/// once with ``CoreError/cancelled`` when its task is cancelled; its action
/// is then not sent. `prepare` runs before what waited is handed over, so
/// what it sends is reduced first.
public final class Entities<ID: Hashable & Sendable, State: Sendable, Action: Sendable>: Sendable {
  @usableFromInline typealias Handle = EntityHandle<State, Action>

  @usableFromInline let registry: Locked<EntityRegistry<ID, State, Action>>
  @usableFromInline let store: (any EntityStore<ID, State, Action>)?
  @usableFromInline let passivation: Passivation
  @usableFromInline let makeState: @Sendable (ID) -> State
  @usableFromInline let prepare: (@Sendable (ID, Core<State, Action>) async -> Void)?
  @usableFromInline let reducer: Reduce<State, Action>
  @usableFromInline let dependencies: Dependencies
  @usableFromInline let clock: any Clock<Duration>
  @usableFromInline let mailboxCapacity: Int?
  @usableFromInline let diagnostics: @Sendable (EffectFailure) -> Void
  /// The registry's clock, read as the time since the registry was made.
  @usableFromInline let now: @Sendable () -> Duration
  let timers: Locked<[Task<Void, Never>]>
  let parking = SweeperParking()

  /// A registry whose entities are stored in `store` when passivated, and
  /// activated from it.
  ///
  /// ```swift
  /// let carts = Entities(store: store, initialState: { Cart(owner: $0) }, reducer: cartReducer)
  /// ```
  ///
  /// - Parameters:
  ///   - store: Where passive entities are kept: each entity's core is a
  ///     durable core on the store's journal for its id.
  ///   - passivation: When active entities are let go.
  ///   - dependencies: The workers every entity's effects use.
  ///   - clock: The clock effects read time from, idle periods are measured
  ///     on and the store's interval syncs are timed by: a `ManualClock`
  ///     drives passivation in tests.
  ///   - mailboxCapacity: Each entity's mailbox capacity (see
  ///     ``Core/init(initialState:dependencies:clock:mailboxCapacity:diagnostics:reducer:)-(_,_,_,_,_,Reduce<State,Action>)``);
  ///     it bounds, too, what waits for an entity that is not active.
  ///   - diagnostics: Receives what the entities' effects throw, what their
  ///     cores report, and the registry's own reports (an activation or a
  ///     passivation that failed).
  ///   - initialState: The state of an id the store has nothing of.
  ///   - prepare: Called with each entity's core once it is activated and
  ///     before anything is sent to it. Observers it adds do not keep the
  ///     entity active. It must not wait on the registry for the same id,
  ///     which is not active until it returns.
  ///   - reducer: Every entity's reducer, live and on recovery.
  public convenience init(
    store: some EntityStore<ID, State, Action>,
    passivation: Passivation = Passivation(),
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    mailboxCapacity: Int? = nil,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    initialState: @escaping @Sendable (ID) -> State,
    prepare: (@Sendable (ID, Core<State, Action>) async -> Void)? = nil,
    reducer: Reduce<State, Action>
  ) {
    self.init(
      store: Optional(store), passivation: passivation, dependencies: dependencies, clock: clock,
      mailboxCapacity: mailboxCapacity, diagnostics: diagnostics, initialState: initialState, prepare: prepare,
      reducer: reducer)
    startTimers()
  }

  /// A registry of entities in memory: each stays active until the
  /// registry shuts down.
  ///
  /// ```swift
  /// let rooms = Entities(initialState: { Room(id: $0) }, reducer: roomReducer)
  /// try await rooms.dispatch(.join("ada"), to: 42)
  /// ```
  ///
  /// - Parameters:
  ///   - dependencies: The workers every entity's effects use.
  ///   - clock: The clock effects read time from.
  ///   - mailboxCapacity: Each entity's mailbox capacity.
  ///   - diagnostics: Receives what the entities' effects throw and what
  ///     their cores report.
  ///   - initialState: The state of an entity on its first use.
  ///   - prepare: Called with each entity's core once it is made, before
  ///     anything is sent to it.
  ///   - reducer: Every entity's reducer.
  public convenience init(
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    mailboxCapacity: Int? = nil,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    initialState: @escaping @Sendable (ID) -> State,
    prepare: (@Sendable (ID, Core<State, Action>) async -> Void)? = nil,
    reducer: Reduce<State, Action>
  ) {
    self.init(
      store: nil, passivation: .never, dependencies: dependencies, clock: clock, mailboxCapacity: mailboxCapacity,
      diagnostics: diagnostics, initialState: initialState, prepare: prepare, reducer: reducer)
  }

  /// The one form both public ones make: `store` is `nil` in memory.
  private init(
    store: (any EntityStore<ID, State, Action>)?, passivation: Passivation, dependencies: Dependencies,
    clock: any Clock<Duration>, mailboxCapacity: Int?, diagnostics: @escaping @Sendable (EffectFailure) -> Void,
    initialState: @escaping @Sendable (ID) -> State, prepare: (@Sendable (ID, Core<State, Action>) async -> Void)?,
    reducer: Reduce<State, Action>
  ) {
    self.registry = Locked(EntityRegistry())
    self.store = store
    self.passivation = passivation
    self.makeState = initialState
    self.prepare = prepare
    self.reducer = reducer
    self.dependencies = dependencies
    self.clock = clock
    self.mailboxCapacity = mailboxCapacity
    self.diagnostics = diagnostics
    self.now = Self.reading(clock)
    self.timers = Locked([])
  }

  deinit {
    for timer in timers.withLock({ $0 }) { timer.cancel() }
    parking.wake()
  }

  private static func reading<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let origin = clock.now
    return { origin.duration(to: clock.now) }
  }

  // MARK: - Sending

  /// Queues `action` for entity `id`, activating it if it is passive, and
  /// returns at once.
  ///
  /// ```swift
  /// carts.send(.add("tea"), to: "ada")
  /// ```
  ///
  /// Actions one task sends to one entity are reduced in the order sent,
  /// across activations and passivations.
  ///
  /// - Returns: ``SendResult/accepted``; ``SendResult/mailboxFull`` if the
  ///   entity's mailbox, or what waits for it while it is not active, holds
  ///   `mailboxCapacity` actions; ``SendResult/shutDown`` once the registry
  ///   has begun to shut down.
  @inlinable
  @discardableResult
  public func send(_ action: Action, to id: ID) -> SendResult {
    let now = passivation == .never ? .zero : self.now()
    let capacity = mailboxCapacity
    var atOnce = false
    let (result, activate, stopped) = registry.withLock { registry -> (SendResult, Bool, Handle?) in
      guard !registry.isShuttingDown else { return (.shutDown, false, nil) }
      if let capacity, let entry = registry.entities[id], !entry.life.isActive, entry.life.pending.count >= capacity {
        return (.mailboxFull, false, nil)
      }
      let stopped = registry.retireIfStopped(id)
      if activatesAtOnce, registry.entities[id] == nil {
        activateAtOnce(id, in: &registry)
        atOnce = true
      }
      let outcome = registry.entities[id, default: .init()].life.send(action)
      var result = SendResult.accepted
      var activate = false
      switch outcome {
      case .deliver(let handle):
        // Under the lock: a passivation that begins after this sees it queued.
        result = handle.core.send(action)
      case .activate:
        registry.resident += 1
        registry.transitions += 1
        activate = true
      case .queued:
        break
      }
      if passivation != .never { registry.touch(id, at: now) }
      return (result, activate, stopped)
    }
    if let stopped { startPassivation(of: id, stopped, force: true) }
    if activate { startActivation(of: id) }
    if atOnce { announceActivated(id) }
    return result
  }

  /// Queues `action` for entity `id` once its mailbox has room, activating
  /// it first if it is passive.
  ///
  /// ```swift
  /// try await carts.enqueue(.add("tea"), to: "ada")
  /// ```
  ///
  /// - Throws: ``CoreError/shutDown`` once the registry has begun to shut
  ///   down; ``CoreError/journal(_:)`` if the entity could not be activated;
  ///   ``CoreError/cancelled`` if the task was cancelled while it waited.
  @inlinable
  public func enqueue(_ action: Action, to id: ID) async throws(CoreError) {
    let handle = try await acquire(id)
    defer { release(id) }
    try await handle.core.enqueue(action)
  }

  /// Reduces `action` in entity `id`, activating it first if it is
  /// passive, and returns once it is reduced (and journaled, with a store).
  ///
  /// ```swift
  /// try await carts.dispatch(.checkOut, to: "ada")
  /// ```
  ///
  /// - Returns: A handle to await the effects the action started.
  /// - Throws: ``CoreError/shutDown`` once the registry has begun to shut
  ///   down; ``CoreError/journal(_:)`` if the entity could not be activated,
  ///   or its journal refused the action.
  @inlinable
  @discardableResult
  public func dispatch(_ action: Action, to id: ID) async throws(CoreError) -> EffectHandle {
    let handle = try await acquire(id)
    defer { release(id) }
    return try await handle.core.dispatch(action)
  }

  // MARK: - Reading

  /// The state of entity `id`, with every action sent to it before the
  /// call reduced; activates it if it is passive.
  ///
  /// ```swift
  /// let cart = try await carts.state(of: "ada")
  /// ```
  ///
  /// - Throws: ``CoreError/shutDown`` once the registry has begun to shut
  ///   down; ``CoreError/journal(_:)`` if the entity could not be activated.
  @inlinable
  public func state(of id: ID) async throws(CoreError) -> State {
    let handle = try await acquire(id)
    defer { release(id) }
    return await handle.core.state
  }

  /// Observes a part of entity `id`'s state with `for await`, as
  /// ``Core/observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)`` does.
  ///
  /// ```swift
  /// for await total in try await carts.observe(\.total, of: "ada") {
  ///   print(total)
  /// }
  /// ```
  ///
  /// The entity stays active while the stream is observed (its loop
  /// runs, or the stream is held un-iterated); the stream ends when the
  /// registry shuts down, or when the entity's core stops because its
  /// journal failed. Observe again to follow the entity: its next use
  /// activates it anew.
  ///
  /// - Throws: ``CoreError/shutDown`` once the registry has begun to shut
  ///   down; ``CoreError/journal(_:)`` if the entity could not be activated.
  @inlinable
  public func observe<Props: Sendable>(
    _ keyPath: any KeyPath<State, Props> & Sendable, of id: ID,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) async throws(CoreError) -> CoreStream<Props> {
    let handle = try await acquire(id)
    defer { release(id) }
    return await handle.core.observe(keyPath, removeDuplicates: isDuplicate, buffering: policy)
  }

  /// Runs `body` with entity `id`'s core, active throughout: for what the
  /// registry does not forward (scopes, subscribers, `record`, `sync`).
  ///
  /// ```swift
  /// let recording = try await carts.withCore("ada") { core in
  ///   await core.record(last: 100)
  /// }
  /// ```
  ///
  /// - Important: Do not keep the core past `body`: once the entity is
  ///   passivated that core has shut down, and a later activation makes
  ///   another.
  /// - Throws: ``CoreError/shutDown`` once the registry has begun to shut
  ///   down; ``CoreError/journal(_:)`` if the entity could not be activated;
  ///   or what `body` throws.
  @inlinable
  public func withCore<Result: Sendable>(
    _ id: ID, _ body: (Core<State, Action>) async throws -> Result
  ) async throws -> Result {
    let handle = try await acquire(id)
    defer { release(id) }
    return try await body(handle.core)
  }

  /// The registry's figures now.
  ///
  /// ```swift
  /// print(carts.metrics.active)
  /// ```
  public var metrics: EntitiesMetrics {
    let ownership = store?.ownership
    return registry.withLock { registry in
      EntitiesMetrics(
        active: registry.resident - registry.passivating, activations: registry.activations,
        passivations: registry.passivations, activationFailures: registry.activationFailures,
        passivationFailures: registry.passivationFailures, activationTime: registry.activationTime,
        waitingCallers: registry.waiters.count, ownership: ownership)
    }
  }

  /// What happens to the entities from now on: activations and
  /// passivations, and those that failed.
  ///
  /// ```swift
  /// for await event in carts.events() {
  ///   print(event)
  /// }
  /// ```
  ///
  /// The stream keeps the newest `limit` events its consumer has not taken
  /// yet, and ends when the registry has shut down.
  public func events(limit: Int = 1_000) -> AsyncStream<EntityEvent<ID>> {
    let (stream, continuation) = AsyncStream<EntityEvent<ID>>.makeStream(bufferingPolicy: .bufferingNewest(limit))
    let key = registry.withLock { registry -> Int? in
      guard !registry.isClosed else { return nil }
      let key = registry.makeID()
      registry.eventSinks[key] = continuation
      return key
    }
    guard let key else {
      continuation.finish()
      return stream
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.registry.withLock { $0.eventSinks.removeValue(forKey: key) }
    }
    return stream
  }
}
