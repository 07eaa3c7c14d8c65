// The registry's one piece of state, under its lock: every entity that is
// not passive, the order they were used in, and who waits.

/// Ids in the order they were last used, oldest first. A use appends; an
/// older entry of the same id stays behind, stale (its tick no longer the
/// entity's), until it reaches the front or a compaction drops it.
struct RecencyQueue<ID> {
  private var items: [(id: ID, tick: UInt64)] = []
  private var head = 0

  var count: Int { items.count - head }
  var first: (id: ID, tick: UInt64)? { head < items.count ? items[head] : nil }

  mutating func append(_ id: ID, tick: UInt64) { items.append((id, tick)) }

  mutating func removeFirst() {
    head += 1
    if head == items.count {
      items.removeAll(keepingCapacity: true)
      head = 0
    }
  }

  /// Keeps only the entries `isCurrent` accepts, in order.
  mutating func compact(_ isCurrent: (ID, UInt64) -> Bool) {
    items = items[head...].filter { isCurrent($0.id, $0.tick) }
    head = 0
  }
}

struct EntityRegistry<ID: Hashable & Sendable, State: Sendable, Action: Sendable> {
  typealias Handle = EntityHandle<State, Action>

  struct Entry {
    var life = EntityLifecycle<Handle, Action>()
    var tick: UInt64 = 0
    var lastUse: Duration = .zero
  }

  var entities: [ID: Entry] = [:]
  var recency = RecencyQueue<ID>()
  var nextTick: UInt64 = 0
  /// Callers waiting for an entity to be active, by the id its lifecycle holds.
  var waiters: [Int: CheckedContinuation<Result<Handle, CoreError>, Never>] = [:]
  var nextID = 0
  /// Entities activating, active or passivating; and of those, passivating.
  var resident = 0
  var passivating = 0
  /// Activations and passivations in flight.
  var transitions = 0
  var isShuttingDown = false
  /// The shutdown has finished: the store is closed.
  var isClosed = false
  var shutdownTask: Task<Void, Never>?
  /// Bumped by every transition's end and every release: what the
  /// shutdown waits on.
  var generation = 0
  var changeWaiters: [CheckedContinuation<Void, Never>] = []
  var eventSinks: [Int: AsyncStream<EntityEvent<ID>>.Continuation] = [:]
  var activations = 0
  var passivations = 0
  var activationFailures = 0
  var passivationFailures = 0
  var activationTime: Duration = .zero

  mutating func makeID() -> Int {
    nextID += 1
    return nextID
  }

  /// Marks `id` as used at `now`, the most recent.
  mutating func touch(_ id: ID, at now: Duration) {
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
  mutating func evict(toAtMost limit: Int, at now: Duration) -> [(ID, Handle)] {
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
  mutating func beginPassivation(_ id: ID, force: Bool = false, ignoringUsers: Bool = false) -> Handle? {
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
  mutating func retireIfStopped(_ id: ID) -> Handle? {
    guard let entry = entities[id], case .active(let handle) = entry.life.phase, handle.core.hasShutDown,
      !isShuttingDown
    else { return nil }
    return beginPassivation(id, force: true, ignoringUsers: true)
  }

  /// Takes the continuations of `ids` out of `waiters`.
  mutating func takeWaiters(_ ids: [Int]) -> [CheckedContinuation<Result<Handle, CoreError>, Never>] {
    ids.map { id in
      guard let waiter = waiters.removeValue(forKey: id) else {
        programmerError("Entities: a waiter the lifecycle holds has no continuation")
      }
      return waiter
    }
  }

  /// Something the shutdown may be waiting for changed.
  mutating func changed() -> [CheckedContinuation<Void, Never>] {
    generation += 1
    defer { changeWaiters = [] }
    return changeWaiters
  }
}

/// An active entity's core, and how many observers its activation hook
/// left on it (those do not keep it active).
struct EntityHandle<State: Sendable, Action: Sendable>: Sendable {
  let core: Core<State, Action>
  let observers: Int

  /// No effect in flight, nothing queued, no observer but the hook's.
  var isIdle: Bool {
    let metrics = core.metrics
    return metrics.effectsInFlight == 0 && metrics.queueDepth == 0 && metrics.observers <= observers
  }
}
