/// A running effect's task, held so that `cancel(id:)` can cancel it.
struct RunningTask: @unchecked Sendable {
  // Safety: `UnsafeCurrentTask` is not Sendable, and a reference to it is
  // only valid inside its `withUnsafeCurrentTask` closure. The registry holds
  // it only between `start` and `finish`, which the effect calls from inside
  // that closure, and calls nothing but `cancel()` and `isCancelled` on it
  // (both read or set the task's atomic status, which other tasks may do),
  // always under the registry's lock, so never after `finish` has removed it.
  let task: UnsafeCurrentTask
}

/// The effects of one core, by token: their cancel ids, lineages, tasks,
/// and which ones are waiting on their own core. Pure: `EffectRegistry` runs
/// it under a lock and performs what the methods return after releasing it.
///
/// Two conditions end a wait for the effects (`SettleWaiters`):
/// - idle: no effect in flight. What a caller from outside the core's
///   effects waits for.
/// - settled: every effect in flight is itself waiting on the core (in
///   `waitUntilIdle()` or `shutdown()`, called from inside it). What a
///   caller from inside an effect waits for: it must not wait for itself,
///   and two such callers must not wait for each other.
struct EffectRegistryStateMachine {
  struct Entry {
    /// The cancel ids it is marked with (an effect nested in several
    /// `.cancellable`s has several).
    let ids: [CancelID]
    let lineage: Lineage?
    var task: RunningTask?
    var isCancelled = false
  }

  private var nextToken = 0
  private var entries: [Int: Entry] = [:]
  private var tokensByID: [CancelID: Set<Int>] = [:]
  /// Effects waiting on their own core, with how many waits each: only
  /// tokens still in `entries` (`finish` removes them).
  private var waiting: [Int: Int] = [:]

  var isIdle: Bool { entries.isEmpty }
  var isSettled: Bool { entries.count == waiting.count }

  /// A token for a new effect, or `nil` if the core's lifecycle refuses
  /// effects (`accepted` is its answer, read under the same lock).
  mutating func register(ids: [CancelID], lineage: Lineage?, accepted: Bool) -> Int? {
    guard accepted else { return nil }
    nextToken += 1
    entries[nextToken] = Entry(ids: ids, lineage: lineage)
    for id in ids { tokensByID[id, default: []].insert(nextToken) }
    return nextToken
  }

  /// The effect's task begins. `false` if it was cancelled before it began.
  mutating func start(_ token: Int, task: RunningTask) -> Bool {
    guard entries[token]?.isCancelled == false else { return false }
    entries[token]?.task = task
    return true
  }

  /// Whether what the effect sends is still accepted: it has not finished,
  /// and it has not been cancelled, by its id, by shutdown, or through its
  /// task (a cancelled `run()` cancels its children).
  func isLive(_ token: Int) -> Bool {
    guard let entry = entries[token], !entry.isCancelled else { return false }
    return entry.task.map { !$0.task.isCancelled } ?? true
  }

  /// Removes effect `token`; returns its lineage, to leave before the lock
  /// is released, so a lineage is done before anyone learns the effect is.
  mutating func finish(_ token: Int) -> Lineage? {
    guard let entry = entries.removeValue(forKey: token) else {
      programmerError("internal: effect \(token) finished twice")
    }
    waiting[token] = nil
    for id in entry.ids {
      tokensByID[id]?.remove(token)
      if tokensByID[id]?.isEmpty == true { tokensByID[id] = nil }
    }
    return entry.lineage
  }

  /// Marks the effects with `id` cancelled, except `sparing` (the effects
  /// the canceller is nested in); returns the running ones' tasks.
  mutating func cancel(id: CancelID, sparing: [Int]) -> [RunningTask] {
    guard let tokens = tokensByID[id] else { return [] }
    let cancelled = tokens.subtracting(sparing)
    let kept = tokens.intersection(sparing)
    tokensByID[id] = kept.isEmpty ? nil : kept
    return cancelled.compactMap { cancel(token: $0) }
  }

  mutating func cancelAll() -> [RunningTask] {
    tokensByID = [:]
    return Array(entries.keys).compactMap { cancel(token: $0) }
  }

  private mutating func cancel(token: Int) -> RunningTask? {
    entries[token]?.isCancelled = true
    return entries[token]?.task
  }

  /// Effects `tokens` (a caller's enclosing effects) begin waiting on their
  /// core. Returns the tokens it counted (those still in flight), to give
  /// back to `endWaiting`.
  mutating func beginWaiting(_ tokens: [Int]) -> [Int] {
    let counted = tokens.filter { entries[$0] != nil }
    for token in counted { waiting[token, default: 0] += 1 }
    return counted
  }

  mutating func endWaiting(_ counted: [Int]) {
    for token in counted {
      guard let count = waiting[token] else { continue }  // finished meanwhile
      waiting[token] = count == 1 ? nil : count - 1
    }
  }
}

/// The tasks waiting for a core's effects to be idle (callers from outside
/// the core's effects) or settled (callers from inside one), keyed by id.
/// Pure. Kept under a lock of its own, which cancellation handlers take:
/// effects are cancelled under the registry's lock, and a cancelled effect
/// may be one of these waiters.
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
