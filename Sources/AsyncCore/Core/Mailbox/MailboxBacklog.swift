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
/// The adopted array is kept reversed, oldest last, so that a slice is
/// read in place from the end and then cut off with `removeLast`: nothing
/// is copied, and an element (its action, its payload, its lineage) is
/// released with the slice that reduced it, not with the whole backlog; an
/// emptied array has nothing left to destroy. The price is one reversal
/// per adoption: a move of each element, in place, far cheaper than
/// reducing it. (Taking from the front instead would keep the
/// taken prefix alive until the end, or need optional slots: tried, every
/// batch's destruction then went through the generic runtime, +14%
/// instructions per `send`.)
@usableFromInline
struct MailboxBacklog<Element> {
  /// The adopted elements, newest first: the next to take is the last.
  @usableFromInline var reversed: [Element] = []

  @inlinable
  init() {}

  /// Whether every element was taken.
  @inlinable
  var isEmpty: Bool { reversed.isEmpty }

  /// How many elements are left.
  @inlinable
  var count: Int { reversed.count }

  /// Takes over `batch`, which the mailbox handed over whole, and leaves
  /// in it this backlog's emptied buffer. Only when empty: what is adopted
  /// must be younger than anything left.
  @inlinable
  mutating func adopt(_ batch: inout [Element]) {
    if !isEmpty { programmerError("the backlog adopted a batch before its last one was taken") }
    swap(&reversed, &batch)
    reversed.withUnsafeMutableBufferPointer { $0.reverse() }
  }

  /// Passes the oldest elements, at most `max` (at least one), oldest first,
  /// to `body`, then lets go of them; returns how many. Nothing is copied:
  /// `body` reads them where they are.
  @inlinable
  @discardableResult
  mutating func consumeOldest(
    max: Int, _ body: (ReversedCollection<Slice<UnsafeBufferPointer<Element>>>) -> Void
  ) -> Int {
    let taking = Swift.min(count, Swift.max(1, max))
    reversed.withUnsafeBufferPointer { newestFirst in
      body(newestFirst[(newestFirst.count - taking)...].reversed())
    }
    reversed.removeLast(taking)
    return taking
  }
}
