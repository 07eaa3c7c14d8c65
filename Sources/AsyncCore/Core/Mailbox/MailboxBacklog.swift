/// What the drain took from the mailbox beyond one slice and has not
/// reduced yet: the second level of the core's queue. Pure; the core keeps
/// it in its isolation, so the drain cuts it into slices with no lock held,
/// while senders append to the mailbox's fresh array.
///
/// The mailbox hands over all it holds in one swap, O(1) under its lock (see
/// `MailboxStateMachine.takeBatch`); when that is more than a slice, the
/// core adopts the array here and takes slices from it. Everything here is
/// older than anything in the mailbox, so whoever reduces pending actions
/// (`dispatch`, `state`, shutdown) reduces the backlog first: per-task FIFO
/// and "a task reads its own writes" hold as with one queue.
///
/// Slots are optional so that a taken element leaves nothing behind: `take`
/// moves each one out and leaves `nil`, so an element (its action, its
/// payload, its lineage) is released with the slice that reduced it, not
/// with the whole backlog. (An `Envelope`'s lineage reference has spare bit
/// patterns, so the optional costs no space.)
@usableFromInline
struct MailboxBacklog<Element> {
  /// The adopted array; slots before `head` were taken and are `nil`.
  @usableFromInline var slots: [Element?] = []
  /// The index of the first element not taken yet.
  @usableFromInline var head = 0

  @inlinable
  init() {}

  /// Whether every element was taken.
  @inlinable
  var isEmpty: Bool { head == slots.count }

  /// How many elements are left.
  @inlinable
  var count: Int { slots.count - head }

  /// Takes over `batch`, which the mailbox handed over whole, and leaves
  /// in it this backlog's emptied buffer. Only when empty: what is adopted
  /// must be younger than anything left.
  @inlinable
  mutating func adopt(_ batch: inout [Element?]) {
    if !isEmpty { programmerError("the backlog adopted a batch before its last one was taken") }
    swap(&slots, &batch)
    head = 0
  }

  /// Moves the oldest elements, at most `max` (at least one), to the end of
  /// `batch`, leaving `nil` in their slots. Once the last one is taken, the
  /// adopted array goes (its slots are all `nil` by then), so a flood's
  /// peak is not kept.
  @inlinable
  mutating func take(max: Int, into batch: inout [Element?]) {
    let end = head + Swift.max(1, Swift.min(count, max))
    batch.reserveCapacity(batch.count + end - head)
    slots.withUnsafeMutableBufferPointer { slots in
      for index in head..<end { batch.append(slots[index].take()) }
    }
    head = end
    if head == slots.count {
      slots = []
      head = 0
    }
  }
}
