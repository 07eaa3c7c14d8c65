/// The delivery state of the `.latest` observers that share one selection:
/// the newest value and its version, the consumers (each a slot, reused with
/// a new generation once its consumer ends), and the parked ones. Pure: no
/// locking, no resuming.
///
/// `LatestCell` keeps it inside a lock and resumes the continuations it
/// returns after the lock is released.
///
/// A publication stores the value, raises the version and hands back every
/// parked consumer at once: one lock for all of them, however many there
/// are. A consumer that was busy finds a version newer than its own when it
/// asks next, and takes the newest value then: it skips straight to it.
/// What each consumer took last (for deduplication) and its version are its
/// own, kept by its iterator; the cell only knows who is parked.
///
/// A consumer is parked exactly when its slot's `parkedEpoch` equals the
/// cell's `epoch`: a publication that takes the waiters raises the epoch,
/// which un-parks all of them without touching their slots.
///
/// Phases: the cell is open until the core ends (`finish()`); consumers
/// then take the value they have not taken yet, then `nil`. A consumer ends
/// on its own side by `cancel(_:)` (break, task cancelled, stream dropped):
/// its slot is freed, and its ticket is stale from then on.
@usableFromInline
struct LatestCellStateMachine<Element> {
  /// A consumer's claim on its slot: stale once the slot is freed.
  @usableFromInline
  struct Ticket: Sendable, Equatable {
    @usableFromInline let index: Int
    @usableFromInline let generation: Int

    @inlinable
    init(index: Int, generation: Int) {
      self.index = index
      self.generation = generation
    }
  }

  /// What a parked consumer is resumed with: the value and its version, or
  /// `nil` when it has ended.
  @usableFromInline typealias Continuation = UnsafeContinuation<Delivery<Element>?, Never>

  @usableFromInline
  struct Slot {
    @usableFromInline var generation = 0
    @usableFromInline var isLive = false
    /// The consumer's place in `waiters`, valid while `parkedEpoch == epoch`.
    @usableFromInline var waiterIndex = 0
    @usableFromInline var parkedEpoch = -1

    @inlinable
    init() {}
  }

  @usableFromInline
  struct Waiter {
    @usableFromInline let slot: Int
    @usableFromInline let continuation: Continuation

    @inlinable
    init(slot: Int, continuation: Continuation) {
      self.slot = slot
      self.continuation = continuation
    }
  }

  @usableFromInline
  enum NextAction {
    /// A newer value than the consumer's: take it.
    case take(Delivery<Element>)
    /// Nothing newer and the cell is open: park.
    case suspend
    /// The consumer or the cell has ended.
    case end
  }

  @usableFromInline var value: Element?
  @usableFromInline var version = 0
  @usableFromInline var epoch = 0
  @usableFromInline var waiters: ContiguousArray<Waiter> = []
  @usableFromInline var slots: ContiguousArray<Slot> = []
  @usableFromInline var freeSlots: [Int] = []
  /// Consumers that have not ended, while the cell is open.
  @usableFromInline var activeCount = 0
  @usableFromInline var isFinished = false

  @inlinable
  init() {}

  /// A new consumer, whose first value is the current one.
  @inlinable
  mutating func join() -> Ticket {
    let index: Int
    if let free = freeSlots.popLast() {
      index = free
    } else {
      index = slots.count
      slots.append(Slot())
    }
    slots[index].isLive = true
    if !isFinished { activeCount += 1 }
    return Ticket(index: index, generation: slots[index].generation)
  }

  /// The core publishes `element`. Returns the parked consumers, to resume
  /// with the returned delivery.
  @inlinable
  mutating func publish(_ element: Element) -> ContiguousArray<Waiter> {
    value = element
    version &+= 1
    guard !waiters.isEmpty else { return [] }
    epoch &+= 1
    var woken: ContiguousArray<Waiter> = []
    woken.reserveCapacity(waiters.count)
    swap(&woken, &waiters)
    return woken
  }

  /// The consumer holding `ticket`, at `version`, asks for a newer value.
  @inlinable
  func next(_ ticket: Ticket, after version: Int) -> NextAction {
    guard isCurrent(ticket) else { return .end }
    if self.version != version, let value { return .take(Delivery(element: value, version: self.version)) }
    return isFinished ? .end : .suspend
  }

  /// The consumer parks, unless something changed since `next` answered.
  /// Returns the continuation to resume now, and with what, if so.
  @inlinable
  mutating func suspend(_ ticket: Ticket, after version: Int, _ continuation: Continuation) -> Delivery<Element>?? {
    switch next(ticket, after: version) {
    case .take(let delivery): return .some(delivery)
    case .end: return .some(nil)
    case .suspend: break
    }
    if slots[ticket.index].parkedEpoch == epoch {
      programmerError("a CoreStream iterator was awaited from two tasks at once; each loop needs its own observer")
    }
    slots[ticket.index].waiterIndex = waiters.count
    slots[ticket.index].parkedEpoch = epoch
    waiters.append(Waiter(slot: ticket.index, continuation: continuation))
    return nil
  }

  /// The consumer ended. Frees its slot; returns whether this counted out an
  /// active consumer, and its parked continuation, to resume with `nil`.
  @inlinable
  mutating func cancel(_ ticket: Ticket) -> (endedActive: Bool, parked: Continuation?) {
    guard isCurrent(ticket) else { return (false, nil) }
    var parked: Continuation?
    let slot = slots[ticket.index]
    if slot.parkedEpoch == epoch {
      parked = waiters[slot.waiterIndex].continuation
      let last = waiters.removeLast()
      if last.slot != ticket.index {
        waiters[slot.waiterIndex] = last
        slots[last.slot].waiterIndex = slot.waiterIndex
      }
    }
    slots[ticket.index] = Slot()
    slots[ticket.index].generation = slot.generation &+ 1
    freeSlots.append(ticket.index)
    guard !isFinished else { return (false, parked) }
    activeCount -= 1
    return (true, parked)
  }

  /// The core ended. Returns how many consumers that counted out, and the
  /// parked ones, to resume with `nil` (a parked consumer has taken the
  /// newest value already).
  @inlinable
  mutating func finish() -> (ended: Int, parked: ContiguousArray<Waiter>) {
    guard !isFinished else { return (0, []) }
    isFinished = true
    defer { activeCount = 0 }
    epoch &+= 1
    var parked: ContiguousArray<Waiter> = []
    swap(&parked, &waiters)
    return (activeCount, parked)
  }

  @inlinable
  func isCurrent(_ ticket: Ticket) -> Bool {
    let slot = slots[ticket.index]
    return slot.isLive && slot.generation == ticket.generation
  }
}

/// A value handed to a consumer of a `LatestCell`, with its version.
@usableFromInline
struct Delivery<Element> {
  @usableFromInline let element: Element
  @usableFromInline let version: Int

  @inlinable
  init(element: Element, version: Int) {
    self.element = element
    self.version = version
  }
}

extension Delivery: Sendable where Element: Sendable {}
