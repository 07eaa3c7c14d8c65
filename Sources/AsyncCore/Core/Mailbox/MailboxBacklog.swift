/// What the drain took from the mailbox beyond one slice and has not
/// reduced yet: the second level of the core's queue, kept in the core's
/// isolation so slices are cut with no lock held. Everything here is older
/// than anything in the mailbox, so whoever reduces pending actions reduces
/// the backlog first: per-task FIFO holds as with one queue.
///
/// Kept reversed, oldest last: a slice is read in place from the end and cut
/// off with `removeLast`, so each element is released with its slice.
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
