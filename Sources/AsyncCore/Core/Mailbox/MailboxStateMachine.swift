/// The core's inbox for `send`, `enqueue` and effects' follow-ups: pending
/// elements, whether a drain is scheduled, the depth against the capacity,
/// and the senders waiting for room. Pure: ``Mailbox`` runs it under a lock
/// and carries out the returned actions after releasing it.
///
/// Invariants:
/// - `pending` is non-empty only while a drain is scheduled (which holds the
///   core alive until the element is reduced).
/// - `depth` counts what was accepted and not yet reported reduced; it stays
///   within `capacity` except for follow-ups, which are never held back.
/// - `waiters` is non-empty only while there is no room for its first, and
///   then the depth is above zero, so a report that admits them is coming.
@usableFromInline
struct MailboxStateMachine<Element, Waiter> {
  @usableFromInline typealias SendAction = MailboxSendAction

  /// What `suspend` decided for a sender that found the mailbox full.
  @usableFromInline
  enum SuspendAction: Equatable {
    /// There was room after all: queued, as `send` would have.
    case sent(SendAction)
    /// Registered: it is resumed when admitted, refused or cancelled.
    case waiting
    /// The task was already cancelled: not queued, not registered.
    case cancelled
  }

  /// What a report of reduced elements (a take or a flush) admitted.
  @usableFromInline
  struct Admission {
    /// The waiters whose elements were queued, oldest first: resume them.
    @usableFromInline var admitted: [Waiter] = []
    /// The waiters the lifecycle no longer accepts: resume them refused.
    @usableFromInline var refused: [Waiter] = []
    /// Whether the admitted elements need a drain started (never, by the
    /// invariants; kept so the storage does not rely on them).
    @usableFromInline var startsDrain = false

    @inlinable
    init() {}
  }

  @usableFromInline
  struct Waiting {
    @usableFromInline let id: Int
    @usableFromInline let element: Element
    @usableFromInline let waiter: Waiter

    @inlinable
    init(id: Int, element: Element, waiter: Waiter) {
      self.id = id
      self.element = element
      self.waiter = waiter
    }
  }

  @usableFromInline var pending: [Element] = []
  @usableFromInline var isDrainScheduled = false
  /// Accepted and not yet reported reduced.
  @usableFromInline var depth = 0
  /// The largest `depth` reached before a report lowered it (see
  /// `highWaterMark`): kept there, not on every send.
  @usableFromInline var peakBeforeReports = 0
  /// The most elements from outside the queue holds (`Int.max`: unbounded).
  @usableFromInline let capacity: Int
  /// See `updateLimit`.
  @usableFromInline var limit: Int
  /// Senders waiting for room, oldest first (at most one per suspended task).
  @usableFromInline var waiters: [Waiting] = []

  @inlinable
  init(capacity: Int = .max) {
    self.capacity = capacity
    self.limit = capacity
  }

  /// Queues `element` if `accepted` (the lifecycle's answer, read under the
  /// same lock) and there is room; a follow-up (`bypassingCapacity`) even
  /// when full: it is the work of an action already accepted.
  @inlinable @inline(__always)
  mutating func send(_ element: Element, accepted: Bool, bypassingCapacity: Bool = false) -> SendAction {
    guard accepted else { return .rejected }
    if depth >= limit && !bypassingCapacity { return .full }
    pending.append(element)
    grow(by: 1)
    return scheduleDrainIfNeeded()
  }

  /// Queues all of `elements` or none.
  @inlinable
  mutating func send(contentsOf elements: [Element], accepted: Bool, bypassingCapacity: Bool = false) -> SendAction {
    guard accepted else { return .rejected }
    guard !elements.isEmpty else { return .enqueued }
    if elements.count > limit - depth && !bypassingCapacity { return .full }
    pending.append(contentsOf: elements)
    grow(by: elements.count)
    return scheduleDrainIfNeeded()
  }

  /// For a sender that found the mailbox full: queues `element` if there is
  /// room now, or registers `waiter`, unless `cancelled` (read under the
  /// lock `cancel(id:)` takes, so a cancellation is seen either here or there).
  @inlinable
  mutating func suspend(
    id: Int, element: Element, waiter: Waiter, accepted: Bool, cancelled: Bool
  ) -> SuspendAction {
    let action = send(element, accepted: accepted)
    if action != .full { return .sent(action) }
    if cancelled { return .cancelled }
    waiters.append(Waiting(id: id, element: element, waiter: waiter))
    updateLimit()
    return .waiting
  }

  /// Removes the waiter registered under `id`, whose task was cancelled;
  /// `nil` if it was admitted or refused already.
  @inlinable
  mutating func cancel(id: Int) -> Waiter? {
    guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
    defer { updateLimit() }
    return waiters.remove(at: index).waiter
  }

  /// The depth up to which a send from outside is queued: the capacity
  /// while nobody waits, 0 while senders wait (so nobody overtakes them).
  @inlinable
  mutating func updateLimit() {
    limit = waiters.isEmpty ? capacity : 0
  }

  @inlinable @inline(__always)
  mutating func grow(by count: Int) {
    depth &+= count
  }

  /// The largest depth reached. The depth falls only in `report`, which
  /// records it first, so the peak is the larger of that and now.
  @inlinable
  var highWaterMark: Int { Swift.max(peakBeforeReports, depth) }

  @inlinable
  mutating func scheduleDrainIfNeeded() -> SendAction {
    if isDrainScheduled { return .enqueued }
    isDrainScheduled = true
    return .startDrain
  }

  /// Accounts for `reduced` elements and admits waiters into the room made,
  /// oldest first, while `accepted`; once not, every waiter is refused.
  @inlinable
  mutating func report(reduced: Int, accepted: Bool) -> Admission {
    if depth > peakBeforeReports { peakBeforeReports = depth }
    depth -= reduced
    var admission = Admission()
    guard !waiters.isEmpty else { return admission }
    guard accepted else {
      admission.refused = waiters.map(\.waiter)
      waiters.removeAll()
      updateLimit()
      return admission
    }
    let room = capacity - depth
    guard room > 0 else { return admission }
    let count = Swift.min(room, waiters.count)
    for waiting in waiters[..<count] {
      pending.append(waiting.element)
      admission.admitted.append(waiting.waiter)
    }
    waiters.removeFirst(count)
    updateLimit()
    grow(by: count)
    admission.startsDrain = scheduleDrainIfNeeded() == .startDrain
    return admission
  }

  /// Refuses every waiter: the core stopped taking actions from outside.
  @inlinable
  mutating func refuseWaiters() -> [Waiter] {
    defer {
      waiters.removeAll()
      updateLimit()
    }
    return waiters.map(\.waiter)
  }

  /// For the drain: moves every pending element into the empty `batch`, or
  /// returns `false` and, unless `stayingScheduled`, ends the drain.
  @inlinable
  mutating func takeBatch(into batch: inout [Element], stayingScheduled: Bool) -> Bool {
    if pending.isEmpty {
      if !stayingScheduled { isDrainScheduled = false }
      return false
    }
    swap(&pending, &batch)
    return true
  }

  /// For `dispatch`, `state` and shutdown: moves pending elements into
  /// `batch`; a scheduled drain still runs and finds the mailbox empty.
  @inlinable
  mutating func flush(into batch: inout [Element]) {
    if !pending.isEmpty { swap(&pending, &batch) }
  }
}

/// What a send into the mailbox must do once its lock is released.
@usableFromInline
enum MailboxSendAction: Equatable, Sendable {
  /// The element is queued; a drain is already on its way.
  case enqueued
  /// The element is queued and nobody will drain it: start a drain.
  case startDrain
  /// The core's lifecycle refuses it; the element was not accepted.
  case rejected
  /// The mailbox has no room for it (or senders wait for room before it);
  /// the element was not accepted.
  case full
}
