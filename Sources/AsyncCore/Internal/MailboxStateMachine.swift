/// The core's inbox for fire-and-forget `send`: pending actions and whether a
/// drain is scheduled, with no locking and no side effects of its own.
///
/// The core keeps it inside a `Mutex`; every transition is a `mutating`
/// method whose result tells the caller what to do after the lock is released
/// (start a drain task, reduce a batch, tell the sender it was refused).
///
/// Invariant: `pending` is non-empty only while `isDrainScheduled` is true or
/// the mailbox is closed, so an accepted action always has a drain on its way,
/// and that drain task holds the core alive until the action is reduced.
@usableFromInline
struct MailboxStateMachine<Action> {
  /// What `send` must do once the lock is released.
  @usableFromInline
  enum SendAction {
    /// The action is queued; a drain is already on its way.
    case enqueued
    /// The action is queued and nobody will drain it: start a drain.
    case startDrain
    /// The core has shut down; the action was not accepted.
    case rejected
  }

  @usableFromInline var pending: [Action] = []
  @usableFromInline var isDrainScheduled = false
  @usableFromInline var isClosed = false

  @inlinable
  init() {}

  @inlinable
  mutating func send(_ action: Action) -> SendAction {
    guard !isClosed else { return .rejected }
    pending.append(action)
    return scheduleDrainIfNeeded()
  }

  @inlinable
  mutating func send(contentsOf actions: [Action]) -> SendAction {
    guard !isClosed else { return .rejected }
    pending.append(contentsOf: actions)
    return pending.isEmpty ? .enqueued : scheduleDrainIfNeeded()
  }

  @inlinable
  mutating func scheduleDrainIfNeeded() -> SendAction {
    if isDrainScheduled { return .enqueued }
    isDrainScheduled = true
    return .startDrain
  }

  /// Called by the drain task: moves every pending action into `batch` (an
  /// empty buffer whose capacity is reused), or, when there is none, marks
  /// the drain finished and returns `false`.
  @inlinable
  mutating func takeBatch(into batch: inout [Action]) -> Bool {
    if pending.isEmpty {
      isDrainScheduled = false
      return false
    }
    swap(&pending, &batch)
    return true
  }

  /// Called by `dispatch` and `state`: moves pending actions into `batch` so
  /// they are reduced before what the caller does next. The scheduled drain,
  /// if any, still runs and finds the mailbox empty.
  @inlinable
  mutating func flush(into batch: inout [Action]) {
    if !pending.isEmpty { swap(&pending, &batch) }
  }

  /// Refuses every later `send` and moves what was accepted into `batch`.
  @inlinable
  mutating func close(into batch: inout [Action]) {
    isClosed = true
    flush(into: &batch)
  }
}
