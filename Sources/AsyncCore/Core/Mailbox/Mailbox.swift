import Synchronization

/// Runs a core's `MailboxStateMachine` under a lock, with the two things
/// that go with it: an atomic "has pending elements" flag, so `dispatch` and
/// `state` skip the lock when nothing was sent, and the reusable buffer
/// batches are reduced from.
///
/// Every take and flush hands over everything pending in one swap: no work
/// under the lock grows with the queue. What the drain takes beyond a slice
/// goes to the core's backlog (see `MailboxBacklog`), and the flag covers
/// it too: "`hasPending` is false ⇒ nothing is pending, here or in the
/// backlog". It is set under the lock by every accepted send; a take sets
/// it to whether it leaves a backlog (the drain takes only once the backlog
/// is empty), and a flush clears it (the core reduces the backlog before it
/// flushes). While the drain reduces the backlog it stays set, so the first
/// flush after the backlog is gone takes the lock for nothing, once.
@usableFromInline
final class Mailbox<Element: Sendable>: Sendable {
  @usableFromInline let machine = Locked(MailboxStateMachine<Element>())
  @usableFromInline let pendingFlag = Atomic<Bool>(false)
  @usableFromInline let lifecycle: Lifecycle
  /// An emptied buffer whose capacity the next take reuses.
  // Safety: read and written only from the owning core's isolation (the
  // drain, `dispatch`, `state` and shutdown all run there), one at a time;
  // no other code reaches it.
  @usableFromInline nonisolated(unsafe) var spare: [Element] = []

  @usableFromInline
  init(lifecycle: Lifecycle) {
    self.lifecycle = lifecycle
  }

  /// Whether anything is pending. A send by the same task happens before
  /// this read and is seen; a concurrent one is not ordered before it anyway.
  @inlinable
  var hasPending: Bool { pendingFlag.load(ordering: .acquiring) }

  /// Queues `element`: from outside (`send`) or from an effect (a follow-up),
  /// if the core's lifecycle accepts it at this instant.
  @inlinable @inline(__always)
  func send(_ element: Element, fromEffect: Bool) -> MailboxStateMachine<Element>.SendAction {
    machine.withLock { machine in
      let action = machine.send(
        element,
        accepted: fromEffect ? lifecycle.acceptsFollowUps : lifecycle.acceptsOutsideActions
      )
      if action != .rejected { pendingFlag.store(true, ordering: .releasing) }
      return action
    }
  }

  /// Queues `elements` from outside, all or none.
  @inlinable
  func send(contentsOf elements: [Element]) -> MailboxStateMachine<Element>.SendAction {
    machine.withLock { machine in
      let action = machine.send(contentsOf: elements, accepted: lifecycle.acceptsOutsideActions)
      if action != .rejected && !elements.isEmpty { pendingFlag.store(true, ordering: .releasing) }
      return action
    }
  }

  /// Makes sure a drain is on its way without queueing anything: how
  /// `dispatch` hands its latest-value publication to the drain. Not gated
  /// by the lifecycle: a publication is never refused.
  @inlinable
  func scheduleDrain() -> MailboxStateMachine<Element>.SendAction {
    machine.withLock { $0.scheduleDrainIfNeeded() }
  }

  /// For the drain task, once the backlog is empty: every pending element,
  /// handed over in one swap, or `nil` when there are none (and then, unless
  /// `stayingScheduled`, the drain is over). The drain keeps what exceeds
  /// `slice` in the backlog, and cuts it outside the lock.
  // Safety (every method below): called from the owning core's isolation.
  @inlinable
  func takeBatch(stayingScheduled: Bool, pendingIfOver slice: Int) -> [Element]? {
    var batch = takeSpare()
    let took = machine.withLock { machine in
      let took = machine.takeBatch(into: &batch, stayingScheduled: stayingScheduled)
      pendingFlag.store(batch.count > slice, ordering: .relaxed)
      return took
    }
    guard took else {
      spare = batch
      return nil
    }
    return batch
  }

  /// The pending elements, possibly none; the drain stays scheduled.
  @inlinable
  func flush() -> [Element] {
    var batch = takeSpare()
    machine.withLock { machine in
      defer { pendingFlag.store(false, ordering: .relaxed) }
      machine.flush(into: &batch)
    }
    return batch
  }

  /// Gives back a reduced batch's buffer, emptied, for its capacity.
  @inlinable
  func recycle(_ batch: inout [Element]) {
    batch.removeAll(keepingCapacity: true)
    swap(&batch, &spare)
  }

  @inlinable
  func takeSpare() -> [Element] {
    var taken: [Element] = []
    swap(&taken, &spare)
    return taken
  }
}
