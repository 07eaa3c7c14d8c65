// The registry's one piece of state, under its lock: every entity that is
// not passive, the order they were used in, and who waits.

/// Ids in the order they were last used, oldest first. A use appends; an
/// older entry of the same id stays behind, stale (its tick no longer the
/// entity's), until it reaches the front or a compaction drops it.
@usableFromInline
struct RecencyQueue<ID> {
  @usableFromInline var items: [(id: ID, tick: UInt64)] = []
  @usableFromInline var head = 0

  @inlinable init() {}

  @inlinable var count: Int { items.count - head }
  @inlinable var first: (id: ID, tick: UInt64)? { head < items.count ? items[head] : nil }

  @inlinable mutating func append(_ id: ID, tick: UInt64) { items.append((id, tick)) }

  @inlinable mutating func removeFirst() {
    head += 1
    if head == items.count {
      items.removeAll(keepingCapacity: true)
      head = 0
    }
  }

  /// Keeps only the entries `isCurrent` accepts, in order.
  @inlinable mutating func compact(_ isCurrent: (ID, UInt64) -> Bool) {
    items = items[head...].filter { isCurrent($0.id, $0.tick) }
    head = 0
  }
}

@usableFromInline
struct EntityRegistry<ID: Hashable & Sendable, State: Sendable, Action: Sendable> {
  @usableFromInline typealias Handle = EntityHandle<State, Action>

  @usableFromInline
  struct Entry {
    @usableFromInline var life = EntityLifecycle<Handle, Action>()
    @usableFromInline var tick: UInt64 = 0
    @usableFromInline var lastUse: Duration = .zero

    @inlinable init() {}
  }

  @usableFromInline var entities: [ID: Entry] = [:]
  @usableFromInline var recency = RecencyQueue<ID>()
  @usableFromInline var nextTick: UInt64 = 0
  /// Callers waiting for an entity to be active, by the id its lifecycle holds.
  @usableFromInline var waiters: [Int: CheckedContinuation<Result<Handle, CoreError>, Never>] = [:]
  @usableFromInline var nextID = 0
  /// Entities activating, active or passivating; and of those, passivating.
  @usableFromInline var resident = 0
  @usableFromInline var passivating = 0
  /// Activations and passivations in flight.
  @usableFromInline var transitions = 0
  @usableFromInline var isShuttingDown = false
  /// Ends once the shutdown has: the store is closed.
  var closed = FinishSignal()
  @usableFromInline var isClosed: Bool { closed.hasFinished }
  @usableFromInline var shutdownTask: Task<Void, Never>?
  /// Bumped by every transition's end and every release: what the
  /// shutdown waits on.
  @usableFromInline var generation = 0
  @usableFromInline var changeWaiters: [CheckedContinuation<Void, Never>] = []
  @usableFromInline var eventSinks: [Int: AsyncStream<EntityEvent<ID>>.Continuation] = [:]
  @usableFromInline var activations = 0
  @usableFromInline var passivations = 0
  @usableFromInline var activationFailures = 0
  @usableFromInline var passivationFailures = 0
  @usableFromInline var activationTime: Duration = .zero

  @inlinable mutating func makeID() -> Int {
    nextID += 1
    return nextID
  }

  /// Marks `id` as used at `now`, the most recent.
  @inlinable mutating func touch(_ id: ID, at now: Duration) {
    nextTick += 1
    let tick = nextTick
    guard entities[id] != nil else { return }
    entities[id]!.tick = tick
    entities[id]!.lastUse = now
    recency.append(id, tick: tick)
    if recency.count > 2 * entities.count + 64 {
      let entities = self.entities
      recency.compact { id, tick in entities[id]?.tick == tick }
    }
  }

  /// Starts passivations of the least recently used idle entities until at
  /// most `limit` are active or activating; returns them.
  @inlinable mutating func evict(toAtMost limit: Int, at now: Duration) -> [(ID, Handle)] {
    var chosen: [(ID, Handle)] = []
    var scanned = 0
    let bound = recency.count
    while resident - passivating > limit, scanned < bound, let (id, tick) = recency.first {
      scanned += 1
      recency.removeFirst()
      guard let entry = entities[id], entry.tick == tick else { continue }
      if let handle = beginPassivation(id) {
        chosen.append((id, handle))
      } else {
        touch(id, at: entry.lastUse)
      }
    }
    return chosen
  }

  /// Starts the passivation of `id` if it is active, unused and idle
  /// (with `force`, whether idle or not).
  @inlinable mutating func beginPassivation(_ id: ID, force: Bool = false, ignoringUsers: Bool = false) -> Handle? {
    guard let entry = entities[id], case .active(let handle) = entry.life.phase else { return nil }
    guard entities[id]!.life.beginPassivation(isIdle: force || handle.isIdle, ignoringUsers: ignoringUsers) != nil
    else { return nil }
    passivating += 1
    transitions += 1
    return handle
  }

  /// If `id` is active on a core that stopped by itself (its journal
  /// failed), starts its passivation so the next use activates it anew
  /// from what the store holds; returns the handle to passivate.
  @inlinable mutating func retireIfStopped(_ id: ID) -> Handle? {
    guard let entry = entities[id], case .active(let handle) = entry.life.phase, handle.core.hasShutDown,
      !isShuttingDown
    else { return nil }
    return beginPassivation(id, force: true, ignoringUsers: true)
  }

  /// Takes the continuations of `ids` out of `waiters`.
  @inlinable mutating func takeWaiters(_ ids: [Int]) -> [CheckedContinuation<Result<Handle, CoreError>, Never>] {
    ids.map { id in
      guard let waiter = waiters.removeValue(forKey: id) else {
        programmerError("Entities: a waiter the lifecycle holds has no continuation")
      }
      return waiter
    }
  }

  /// Something the shutdown may be waiting for changed.
  @inlinable mutating func changed() -> [CheckedContinuation<Void, Never>] {
    generation += 1
    defer { changeWaiters = [] }
    return changeWaiters
  }
}

/// An active entity's core, and how many observers its activation hook
/// left on it (those do not keep it active).
@usableFromInline
struct EntityHandle<State: Sendable, Action: Sendable>: Sendable {
  @usableFromInline let core: Core<State, Action>
  @usableFromInline let observers: Int

  @inlinable
  init(core: Core<State, Action>, observers: Int) {
    self.core = core
    self.observers = observers
  }

  /// No effect in flight, nothing queued, no observer but the hook's.
  @usableFromInline var isIdle: Bool {
    let metrics = core.metrics
    return metrics.effectsInFlight == 0 && metrics.queueDepth == 0 && metrics.observers <= observers
  }
}
