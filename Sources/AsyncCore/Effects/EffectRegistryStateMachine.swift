/// The effects of one core, by token: their cancel ids, their running jobs
/// and which ones wait on their own core. Pure: `EffectRegistry` runs it
/// under a lock and performs what the methods return after releasing it.
///
/// Slots are reused through a free list (only cancel ids are hashed); a
/// token is slot plus generation, so a stale token never names the effect
/// that reuses its slot. A pinned effect cannot finish: cancellers pin the
/// tasks they cancel outside the lock, and end observers pin what they wait
/// for, so the finish path reaches the slow path that tells them.
///
/// A wait ends when the core is idle (no effect in flight) or, for a caller
/// inside an effect, settled: every effect in flight waits on the core, so
/// it never waits for itself.
struct EffectRegistryStateMachine {
  struct Entry {
    let token: Int
    /// The cancel ids it is marked with (an effect nested in several
    /// `.cancellable`s has several).
    let ids: [CancelID]
    /// The dispatch it belongs to, by identity; the job or its registering
    /// code holds the lineage while the entry exists.
    let lineage: ObjectIdentifier?
    /// Set by `start`: the job, whose task is running.
    var job: EffectJob?
    var isCancelled = false
    /// How many waits on its own core the effect is in.
    var waits = 0
    /// Cancellers outside the lock plus end observers: while any pin is
    /// held, the effect cannot finish.
    var pins = 0
  }

  /// What holds a pinned effect's finish, by token: only effects with an
  /// end observer, or whose task waits for its cancellers, have one.
  struct Held {
    /// The effect's own task, parked until its cancellers are done.
    var finisher: UnsafeContinuation<Void, Never>?
    /// Told once the effect has finished; each holds one of its pins.
    var endObservers: [@Sendable () -> Void] = []
  }

  /// What `finish` did.
  enum FinishAction: Equatable {
    /// Removed.
    case finished
    /// Pinned (a canceller is using its task, or an observer waits for its
    /// end): call `parkFinish`, and finish again once it lets the task go.
    case pinned
  }

  /// What `parkFinish` did.
  struct ParkAction {
    /// Whether the task is parked (resumed by `unpin`); if not, finish again
    /// at once.
    let isParked: Bool
    /// The effect's end observers, whose pins are let go: call them once it
    /// has finished.
    let endObservers: [@Sendable () -> Void]
  }

  /// The low bits of a token are its slot; the rest, the low 32 bits of its
  /// generation.
  private static let slotBits = 32
  private static let slotMask = (1 << slotBits) - 1

  private var slots: [Entry?] = []
  private var freeSlots: [Int] = []
  /// Effects in flight: the occupied slots.
  private var count = 0
  /// Effects in flight with `waits > 0`.
  private var waitingCount = 0
  private var tokensByID: [CancelID: Set<Int>] = [:]
  /// Pinned effects' parked tasks and end observers (see `Held`).
  private var held: [Int: Held] = [:]

  var isIdle: Bool { count == 0 }
  /// Effects registered and not finished: queued or running.
  var inFlight: Int { count }
  var isSettled: Bool { count == waitingCount }

  /// The low 32 bits of the generation `token` was registered with.
  static func generation(of token: Int) -> UInt32 {
    UInt32(truncatingIfNeeded: token >> slotBits)
  }

  /// The slot of `token`, if that effect is still in flight.
  private func slot(of token: Int) -> Int? {
    let slot = token & Self.slotMask
    guard slot < slots.count, slots[slot]?.token == token else { return nil }
    return slot
  }

  /// A token for a new effect, or `nil` if the lifecycle refuses effects
  /// (`accepted`, read under the same lock). An effect of a cancelled
  /// lineage is registered cancelled: it never starts.
  mutating func register(
    ids: [CancelID], generation: Int, lineage: ObjectIdentifier? = nil, lineageIsCancelled: Bool = false,
    accepted: Bool
  ) -> Int? {
    guard accepted else { return nil }
    let slot: Int
    if let free = freeSlots.popLast() {
      slot = free
    } else {
      slot = slots.count
      guard slot <= Self.slotMask else { programmerError("internal: too many effects in flight") }
      slots.append(nil)
    }
    let token = generation << Self.slotBits | slot
    slots[slot] = Entry(token: token, ids: ids, lineage: lineage, isCancelled: lineageIsCancelled)
    count += 1
    for id in ids { tokensByID[id, default: []].insert(token) }
    return token
  }

  /// The effect's job begins to run (its task is `job.task`). `false` if
  /// it was cancelled before it began.
  mutating func start(_ token: Int, job: EffectJob) -> Bool {
    guard let slot = slot(of: token), slots[slot]?.isCancelled == false else { return false }
    slots[slot]?.job = job
    return true
  }

  enum Liveness {
    /// Finished (or never registered): what it sends is refused.
    case ended
    /// Cancelled by the core (by id, lineage or shutdown): what it sends is
    /// refused.
    case cancelled
    /// Not cancelled, and not running yet.
    case pending
    /// Not cancelled by the core, running in `job.task`, which may have
    /// been cancelled on its own (a cancelled `run()` cancels its children).
    case running(EffectJob)
  }

  /// Whether what the effect sends is still accepted (its task's own
  /// cancellation the storage checks, for `.running`).
  func liveness(_ token: Int) -> Liveness {
    guard let slot = slot(of: token), let entry = slots[slot] else { return .ended }
    guard !entry.isCancelled else { return .cancelled }
    return entry.job.map(Liveness.running) ?? .pending
  }

  /// Removes effect `token`, unless it is pinned (by a canceller or an end
  /// observer).
  mutating func finish(_ token: Int) -> FinishAction {
    guard let slot = slot(of: token), let entry = slots[slot] else {
      programmerError("internal: effect \(token) finished twice")
    }
    if entry.pins > 0 { return .pinned }
    slots[slot] = nil
    freeSlots.append(slot)
    count -= 1
    if entry.waits > 0 { waitingCount -= 1 }
    for id in entry.ids {
      tokensByID[id]?.remove(token)
      if tokensByID[id]?.isEmpty == true { tokensByID[id] = nil }
    }
    return .finished
  }

  /// Parks the task of pinned effect `token` until its cancellers are done.
  /// Takes its end observers first, letting go of their pins: the task
  /// calls them once the effect has finished.
  mutating func parkFinish(_ token: Int, _ continuation: UnsafeContinuation<Void, Never>) -> ParkAction {
    guard let slot = slot(of: token) else { return ParkAction(isParked: false, endObservers: []) }
    let endObservers = held[token]?.endObservers ?? []
    slots[slot]?.pins -= endObservers.count
    guard let pins = slots[slot]?.pins, pins > 0 else {
      held[token] = nil
      return ParkAction(isParked: false, endObservers: endObservers)
    }
    held[token] = Held(finisher: continuation)
    return ParkAction(isParked: true, endObservers: endObservers)
  }

  /// A canceller is done with the task of `token`; returns the effect's
  /// own task if it is waiting to finish and no pin is left.
  mutating func unpin(_ token: Int) -> UnsafeContinuation<Void, Never>? {
    guard let slot = slot(of: token), slots[slot] != nil else {
      programmerError("internal: a pinned effect finished")
    }
    slots[slot]?.pins -= 1
    // A parked task's observers were taken when it parked, and no observer
    // is added while it is parked (see `observeEnd`): its pins are cancellers'.
    guard slots[slot]?.pins == 0, let finisher = held[token]?.finisher else { return nil }
    held[token] = nil
    return finisher
  }

  /// Has `observer` called once running effect `token` has finished,
  /// pinning it until then; `false` (no call) if its work is over or never began.
  mutating func observeEnd(_ token: Int, _ observer: @escaping @Sendable () -> Void) -> Bool {
    guard let slot = slot(of: token), slots[slot]?.job != nil, held[token]?.finisher == nil else { return false }
    slots[slot]?.pins += 1
    held[token, default: Held()].endObservers.append(observer)
    return true
  }

  /// Marks the effects with `id` cancelled, except `sparing` (those the
  /// canceller is nested in); returns the running ones' jobs, pinned.
  mutating func cancel(id: CancelID, sparing: [Int]) -> [EffectJob] {
    guard let tokens = tokensByID[id] else { return [] }
    let cancelled = tokens.subtracting(sparing)
    let kept = tokens.intersection(sparing)
    tokensByID[id] = kept.isEmpty ? nil : kept
    return cancelled.compactMap { cancel(token: $0) }
  }

  /// Marks every effect cancelled; returns the running ones' jobs, pinned.
  mutating func cancelAll() -> [EffectJob] {
    tokensByID = [:]
    var running: [EffectJob] = []
    for slot in slots.indices where slots[slot] != nil {
      if let job = cancel(slot: slot) { running.append(job) }
    }
    return running
  }

  /// Marks the effects of `lineage` cancelled; returns the running ones'
  /// jobs, pinned. Visits every slot: rare, and off the hot paths.
  mutating func cancel(lineage: ObjectIdentifier) -> [EffectJob] {
    var running: [EffectJob] = []
    for slot in slots.indices where slots[slot]?.lineage == lineage {
      if let job = cancel(slot: slot) { running.append(job) }
    }
    return running
  }

  private mutating func cancel(token: Int) -> EffectJob? {
    guard let slot = slot(of: token) else { return nil }
    return cancel(slot: slot)
  }

  /// Marks the effect in `slot` cancelled; returns its job, pinned, if it
  /// is running and was not cancelled before (its task was cancelled then).
  private mutating func cancel(slot: Int) -> EffectJob? {
    guard let entry = slots[slot], !entry.isCancelled else { return nil }
    slots[slot]?.isCancelled = true
    guard let job = entry.job else { return nil }
    slots[slot]?.pins += 1
    return job
  }

  /// A caller's enclosing effects begin waiting on their core; returns those
  /// counted, for `endWaiting`.
  mutating func beginWaiting(_ tokens: [Int]) -> [Int] {
    var counted: [Int] = []
    for token in tokens {
      guard let slot = slot(of: token) else { continue }
      counted.append(token)
      if slots[slot]?.waits == 0 { waitingCount += 1 }
      slots[slot]?.waits += 1
    }
    return counted
  }

  mutating func endWaiting(_ counted: [Int]) {
    for token in counted {
      guard let slot = slot(of: token) else { continue }  // finished meanwhile
      slots[slot]?.waits -= 1
      if slots[slot]?.waits == 0 { waitingCount -= 1 }
    }
  }
}

/// The tasks waiting for a core's effects to be idle or settled, by id.
/// Pure; under a lock of its own, because cancellation handlers take it
/// while effects are cancelled under the registry's lock.
struct SettleWaiters {
  private var nextID = 0
  private var idle: [Int: UnsafeContinuation<Void, Never>] = [:]
  private var settled: [Int: UnsafeContinuation<Void, Never>] = [:]

  mutating func makeID() -> Int {
    nextID += 1
    return nextID
  }

  mutating func park(_ id: Int, untilSettled: Bool, _ continuation: UnsafeContinuation<Void, Never>) {
    if untilSettled {
      settled[id] = continuation
    } else {
      idle[id] = continuation
    }
  }

  mutating func remove(_ id: Int) -> UnsafeContinuation<Void, Never>? {
    idle.removeValue(forKey: id) ?? settled.removeValue(forKey: id)
  }

  /// The waiters whose condition holds, removed.
  mutating func take(isIdle: Bool, isSettled: Bool) -> [UnsafeContinuation<Void, Never>] {
    var ready: [UnsafeContinuation<Void, Never>] = []
    if isIdle, !idle.isEmpty {
      ready += idle.values
      idle = [:]
    }
    if isSettled, !settled.isEmpty {
      ready += settled.values
      settled = [:]
    }
    return ready
  }
}
