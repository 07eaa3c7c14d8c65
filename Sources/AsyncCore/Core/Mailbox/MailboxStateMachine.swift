/// The core's inbox for fire-and-forget `send` and effects' follow-ups:
/// pending elements and whether a drain is scheduled. Pure: no locking, no
/// side effects; ``Mailbox`` runs it under a lock and carries out the
/// returned actions after releasing it.
///
/// Invariant: elements are pending only while `isDrainScheduled` is true,
/// so an accepted element always has a drain on its way, and that drain
/// task holds the core alive until the element is reduced.
///
/// The drain takes a bounded slice at a time (see `takeBatch`): the pending
/// elements are `pending[head...]`, and a slice moves `head` instead of
/// shifting the array; the taken prefix is dropped once it is more than
/// half of the array (one move of fewer elements than were taken), or when
/// everything has been taken.
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

  /// Accepted elements; those before `head` were taken already.
  @usableFromInline var pending: [Element] = []
  /// The index of the first element not yet taken.
  @usableFromInline var head = 0
  @usableFromInline var isDrainScheduled = false

  /// How many elements are pending.
  @inlinable
  var pendingCount: Int { pending.count - head }

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

  /// Called by the drain task: moves the oldest pending elements, at most
  /// `max` (at least one), into `batch` (an empty buffer whose capacity is
  /// reused), or, when there is none, returns `false` and, unless
  /// `stayingScheduled`, marks the drain finished. Elements left pending
  /// keep the drain scheduled.
  @inlinable
  mutating func takeBatch(into batch: inout [Element], max: Int, stayingScheduled: Bool) -> Bool {
    let available = pending.count - head
    if available == 0 {
      if !stayingScheduled { isDrainScheduled = false }
      return false
    }
    if head == 0 && available <= max {
      // All of it: hand over the array itself, and keep the batch's.
      swap(&pending, &batch)
      return true
    }
    let end = head + Swift.max(1, Swift.min(available, max))
    batch.append(contentsOf: pending[head..<end])
    head = end
    dropTaken()
    return true
  }

  /// Called by `dispatch`, `state` and shutdown: moves pending elements into
  /// `batch` so they are reduced before what the caller does next. The
  /// scheduled drain, if any, still runs and finds the mailbox empty.
  @inlinable
  mutating func flush(into batch: inout [Element]) {
    if head == 0 {
      if !pending.isEmpty { swap(&pending, &batch) }
      return
    }
    batch.append(contentsOf: pending[head...])
    head = pending.count
    dropTaken()
  }

  /// Drops the taken prefix once everything is taken, or once it is more
  /// than half of the array: the move then costs fewer element copies than
  /// the slices that were taken, so each element is moved at most once on
  /// average.
  @inlinable
  mutating func dropTaken() {
    if head == pending.count {
      pending.removeAll(keepingCapacity: true)
      head = 0
    } else if head > pending.count / 2 {
      pending.removeSubrange(0..<head)
      head = 0
    }
  }
}
