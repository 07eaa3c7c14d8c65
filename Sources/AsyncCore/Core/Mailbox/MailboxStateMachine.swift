/// The core's inbox for fire-and-forget `send` and effects' follow-ups:
/// pending elements and whether a drain is scheduled. Pure: no locking, no
/// side effects; ``Mailbox`` runs it under a lock and carries out the
/// returned actions after releasing it.
///
/// Invariant: `pending` is non-empty only while `isDrainScheduled` is true,
/// so an accepted element always has a drain on its way, and that drain
/// task holds the core alive until the element is reduced.
@usableFromInline
struct MailboxStateMachine<Element> {
  /// What `send` must do once the lock is released.
  @usableFromInline
  enum SendAction: Equatable {
    /// The element is queued; a drain is already on its way.
    case enqueued
    /// The element is queued and nobody will drain it: start a drain.
    case startDrain
    /// The core's lifecycle refuses it; the element was not accepted.
    case rejected
  }

  @usableFromInline var pending: [Element] = []
  @usableFromInline var isDrainScheduled = false

  @inlinable
  init() {}

  /// Queues `element` if `accepted` (the lifecycle's answer, read under the
  /// same lock).
  @inlinable
  mutating func send(_ element: Element, accepted: Bool) -> SendAction {
    guard accepted else { return .rejected }
    pending.append(element)
    return scheduleDrainIfNeeded()
  }

  @inlinable
  mutating func send(contentsOf elements: [Element], accepted: Bool) -> SendAction {
    guard accepted else { return .rejected }
    guard !elements.isEmpty else { return .enqueued }
    pending.append(contentsOf: elements)
    return scheduleDrainIfNeeded()
  }

  @inlinable
  mutating func scheduleDrainIfNeeded() -> SendAction {
    if isDrainScheduled { return .enqueued }
    isDrainScheduled = true
    return .startDrain
  }

  /// Called by the drain task: moves every pending element into `batch` (an
  /// empty buffer whose capacity is reused), or, when there is none, returns
  /// `false` and, unless `stayingScheduled`, marks the drain finished.
  @inlinable
  mutating func takeBatch(into batch: inout [Element], stayingScheduled: Bool) -> Bool {
    if pending.isEmpty {
      if !stayingScheduled { isDrainScheduled = false }
      return false
    }
    swap(&pending, &batch)
    return true
  }

  /// Called by `dispatch`, `state` and shutdown: moves pending elements into
  /// `batch` so they are reduced before what the caller does next. The
  /// scheduled drain, if any, still runs and finds the mailbox empty.
  @inlinable
  mutating func flush(into batch: inout [Element]) {
    if !pending.isEmpty { swap(&pending, &batch) }
  }
}
