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
/// which ones are waiting on their own core, and the tasks waiting for the
/// core's effects to settle. Pure: `EffectRegistry` runs it under a lock and
/// performs what the methods return after releasing it.
///
/// "Settled" (quiescent) means every effect in flight is itself waiting on
/// the core (in `waitUntilIdle()` or `shutdown()`, called from inside it):
/// nothing else can happen until something from outside does. With no such
/// caller it is simply "no effect in flight".
struct EffectRegistryStateMachine {
  struct Entry {
    let id: CancelID?
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
  private var nextWaiter = 0
  private var settleWaiters: [Int: UnsafeContinuation<Void, Never>] = [:]

  var isSettled: Bool { entries.count == waiting.count }

  /// A token for a new effect, or `nil` if the core's lifecycle refuses
  /// effects (`accepted` is its answer, read under the same lock).
  mutating func register(id: CancelID?, lineage: Lineage?, accepted: Bool) -> Int? {
    guard accepted else { return nil }
    nextToken += 1
    entries[nextToken] = Entry(id: id, lineage: lineage)
    if let id { tokensByID[id, default: []].insert(nextToken) }
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

  /// What `finish` leaves to do.
  struct FinishAction {
    /// To leave before the lock is released, so a lineage is done before
    /// anyone learns the effect is.
    let lineage: Lineage?
    let settled: [UnsafeContinuation<Void, Never>]
  }

  mutating func finish(_ token: Int) -> FinishAction {
    guard let entry = entries.removeValue(forKey: token) else {
      programmerError("internal: effect \(token) finished twice")
    }
    waiting[token] = nil
    if let id = entry.id {
      tokensByID[id]?.remove(token)
      if tokensByID[id]?.isEmpty == true { tokensByID[id] = nil }
    }
    return FinishAction(lineage: entry.lineage, settled: takeSettleWaitersIfSettled())
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
  /// back to `endWaiting`, and the waiters this settles.
  mutating func beginWaiting(_ tokens: [Int]) -> (counted: [Int], settled: [UnsafeContinuation<Void, Never>]) {
    let counted = tokens.filter { entries[$0] != nil }
    for token in counted { waiting[token, default: 0] += 1 }
    return (counted, takeSettleWaitersIfSettled())
  }

  mutating func endWaiting(_ counted: [Int]) {
    for token in counted {
      guard let count = waiting[token] else { continue }  // finished meanwhile
      waiting[token] = count == 1 ? nil : count - 1
    }
  }

  mutating func makeWaiterID() -> Int {
    nextWaiter += 1
    return nextWaiter
  }

  /// Parks waiter `id` until the effects settle; `false` (not parked) if
  /// they already have or the wait was cancelled.
  mutating func parkUntilSettled(_ id: Int, _ continuation: UnsafeContinuation<Void, Never>, isCancelled: Bool)
    -> Bool
  {
    guard !isSettled, !isCancelled else { return false }
    settleWaiters[id] = continuation
    return true
  }

  mutating func removeSettleWaiter(_ id: Int) -> UnsafeContinuation<Void, Never>? {
    settleWaiters.removeValue(forKey: id)
  }

  private mutating func takeSettleWaitersIfSettled() -> [UnsafeContinuation<Void, Never>] {
    guard isSettled, !settleWaiters.isEmpty else { return [] }
    defer { settleWaiters = [:] }
    return Array(settleWaiters.values)
  }
}
