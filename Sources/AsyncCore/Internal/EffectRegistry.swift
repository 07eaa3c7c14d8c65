/// A running effect's task, held so that `cancel(id:)` can cancel it.
struct RunningTask: @unchecked Sendable {
  // Safety: `UnsafeCurrentTask` is not Sendable, and a reference to it is
  // only valid inside its `withUnsafeCurrentTask` closure. The registry holds
  // it only between `start` and `finish`, which the effect calls from inside
  // that closure, and calls nothing but `cancel()` on it (documented as safe
  // from other tasks), always under the registry's lock, so never after
  // `finish` has removed it.
  let task: UnsafeCurrentTask
}

/// The effects of one core, by token, with their cancel ids: the state alone,
/// no locking. `EffectRegistry` runs it under a lock.
struct EffectRegistryState {
  struct Entry {
    let id: CancelID?
    var task: RunningTask?
    var isCancelled = false
  }

  private var nextToken = 0
  private var entries: [Int: Entry] = [:]
  private var tokensByID: [CancelID: Set<Int>] = [:]
  private var isClosed = false

  /// A token for a new effect, or `nil` once the registry is closed.
  mutating func register(id: CancelID?) -> Int? {
    guard !isClosed else { return nil }
    nextToken += 1
    entries[nextToken] = Entry(id: id)
    if let id { tokensByID[id, default: []].insert(nextToken) }
    return nextToken
  }

  /// The effect's task begins. `false` if it was cancelled before it began.
  mutating func start(_ token: Int, task: RunningTask) -> Bool {
    guard entries[token]?.isCancelled == false else { return false }
    entries[token]?.task = task
    return true
  }

  mutating func finish(_ token: Int) {
    guard let entry = entries.removeValue(forKey: token), let id = entry.id else { return }
    tokensByID[id]?.remove(token)
    if tokensByID[id]?.isEmpty == true { tokensByID[id] = nil }
  }

  /// Marks the effects with `id` cancelled; returns the running ones' tasks.
  mutating func cancel(id: CancelID) -> [RunningTask] {
    guard let tokens = tokensByID.removeValue(forKey: id) else { return [] }
    return tokens.compactMap { cancel(token: $0) }
  }

  mutating func cancelAll() -> [RunningTask] {
    tokensByID = [:]
    return Array(entries.keys).compactMap { cancel(token: $0) }
  }

  mutating func close() {
    isClosed = true
  }

  private mutating func cancel(token: Int) -> RunningTask? {
    entries[token]?.isCancelled = true
    return entries[token]?.task
  }
}

/// The effects of one core: cancel ids are scoped to it, so two cores never
/// cancel each other's effects. Also counts effects in flight, for idle.
@usableFromInline
final class EffectRegistry: Sendable {
  private let state = Locked(EffectRegistryState())
  /// Registered effects not finished yet, started or not.
  let inFlight = ActivityCounter()

  @usableFromInline
  init() {}

  func register(id: CancelID?) -> Int? {
    let token = state.withLock { $0.register(id: id) }
    if token != nil { inFlight.enter() }
    return token
  }

  func start(_ token: Int, task: UnsafeCurrentTask) -> Bool {
    state.withLock { $0.start(token, task: RunningTask(task: task)) }
  }

  func finish(_ token: Int) {
    state.withLock { $0.finish(token) }
    inFlight.leave()
  }

  func cancel(id: CancelID) {
    // Cancelled under the lock: a task reference is only valid until its
    // effect calls `finish`, which takes this lock. Cancellation handlers run
    // synchronously here; none of AsyncCore's takes this lock.
    state.withLock { state in
      for running in state.cancel(id: id) { running.task.cancel() }
    }
  }

  func cancelAll() {
    state.withLock { state in
      for running in state.cancelAll() { running.task.cancel() }
    }
  }

  /// Refuses new effects: for a core that is shutting down immediately.
  func close() {
    state.withLock { $0.close() }
  }
}
