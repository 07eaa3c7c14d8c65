import Synchronization

/// Runs a core's `MailboxStateMachine` under a lock, plus an atomic
/// "has pending" flag (so `dispatch` and `state` skip the lock when nothing
/// was sent) and the ``CoreMetrics`` figures in atomics. Only what the lock
/// holder writes lives here; what only the drain writes lives in the core,
/// off these cache lines.
///
/// Every take and flush hands over everything pending in one swap. The flag
/// covers the core's backlog too: "`hasPending` is false ⇒ nothing is
/// pending, here or in the backlog" (a take sets it to whether it leaves a
/// backlog, a flush clears it).
@usableFromInline
final class Mailbox<Element: Sendable>: Sendable {
  /// A sender waiting for room: resumed with what its send did once
  /// admitted, or with `CoreError.shutDown` or `CancellationError`.
  @usableFromInline typealias Waiter = CheckedContinuation<MailboxSendAction, any Error>

  @usableFromInline let machine: Locked<MailboxStateMachine<Element, Waiter>>
  @usableFromInline let pendingFlag = Atomic<Bool>(false)
  @usableFromInline let lifecycle: Lifecycle
  /// Ids for waiters, so a cancellation finds its own.
  @usableFromInline let waiterIDs = Atomic<Int>(0)
  /// The machine's figures for ``CoreMetrics``, stored under its lock when
  /// they change, so reading them takes no lock.
  @usableFromInline let depthFigure = Atomic<Int>(0)
  @usableFromInline let peakFigure = Atomic<Int>(0)
  @usableFromInline let waitingFigure = Atomic<Int>(0)
  @usableFromInline
  init(lifecycle: Lifecycle, capacity: Int) {
    self.lifecycle = lifecycle
    self.machine = Locked(MailboxStateMachine(capacity: capacity))
  }

  /// Whether anything is pending. A send by the same task happens before
  /// this read and is seen; a concurrent one is not ordered before it anyway.
  @inlinable
  var hasPending: Bool { pendingFlag.load(ordering: .acquiring) }

  /// Queues `element` if the lifecycle accepts it now. A follow-up, and what
  /// a middleware sends (`fromInside`), pass a full mailbox: nothing inside
  /// the core can wait for room.
  @inlinable @inline(__always)
  func send(_ element: Element, fromEffect: Bool, fromInside: Bool = false) -> MailboxSendAction {
    machine.withLock { machine in
      let action = machine.send(
        element,
        accepted: fromEffect ? lifecycle.acceptsFollowUps : lifecycle.acceptsOutsideActions,
        bypassingCapacity: fromEffect || fromInside
      )
      if action == .enqueued || action == .startDrain { noteQueued(machine) }
      return action
    }
  }

  /// Queues `elements` from outside, all or none.
  @inlinable
  func send(contentsOf elements: [Element], fromInside: Bool = false) -> MailboxSendAction {
    machine.withLock { machine in
      let action = machine.send(
        contentsOf: elements, accepted: lifecycle.acceptsOutsideActions, bypassingCapacity: fromInside)
      if (action == .enqueued || action == .startDrain) && !elements.isEmpty { noteQueued(machine) }
      return action
    }
  }

  /// Makes sure a drain is on its way without queueing anything: how
  /// `dispatch` hands its latest-value publication to the drain. Not gated
  /// by the lifecycle nor the capacity: a publication is never refused.
  @inlinable
  func scheduleDrain() -> MailboxSendAction {
    machine.withLock { $0.scheduleDrainIfNeeded() }
  }

  /// Under the lock, once elements were queued: the flag and the depth.
  @inlinable @inline(__always)
  func noteQueued(_ machine: borrowing MailboxStateMachine<Element, Waiter>) {
    pendingFlag.store(true, ordering: .releasing)
    depthFigure.store(machine.depth, ordering: .relaxed)
  }

  /// Under the lock, after a report, an admission or a change of waiters.
  @inlinable
  func noteFigures(_ machine: borrowing MailboxStateMachine<Element, Waiter>) {
    depthFigure.store(machine.depth, ordering: .relaxed)
    peakFigure.store(machine.peakBeforeReports, ordering: .relaxed)
    waitingFigure.store(machine.waiters.count, ordering: .relaxed)
  }

  /// The queue's figures, read without the lock: each is exact when
  /// stored, and the high-water mark is the larger of the peak recorded at
  /// the last report and the depth now.
  var figures: (depth: Int, highWaterMark: Int, waiting: Int) {
    let depth = depthFigure.load(ordering: .relaxed)
    return (depth, max(depth, peakFigure.load(ordering: .relaxed)), waitingFigure.load(ordering: .relaxed))
  }

  /// Queues `element` once there is room, behind the senders already
  /// waiting, for a `send` that found the mailbox full.
  ///
  /// - Throws: `CoreError.shutDown` if the core refuses it, now or while it
  ///   waits; `CancellationError` if the task is cancelled while it waits
  ///   (the element is not queued).
  @usableFromInline
  func waitForRoom(_ element: Element) async throws -> MailboxSendAction {
    let id = waiterIDs.wrappingAdd(1, ordering: .relaxed).oldValue
    let action = try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (waiter: Waiter) in
        let decision = machine.withLock { machine in
          let decision = machine.suspend(
            id: id, element: element, waiter: waiter, accepted: lifecycle.acceptsOutsideActions,
            cancelled: Task.isCancelled)
          if case .sent(let action) = decision, action != .rejected { pendingFlag.store(true, ordering: .releasing) }
          noteFigures(machine)
          return decision
        }
        switch decision {
        case .sent(.rejected): waiter.resume(throwing: CoreError.shutDown)
        case .sent(let action): waiter.resume(returning: action)
        case .cancelled: waiter.resume(throwing: CancellationError())
        case .waiting: break
        }
      }
    } onCancel: {
      let waiter = machine.withLock { machine in
        defer { noteFigures(machine) }
        return machine.cancel(id: id)
      }
      waiter?.resume(throwing: CancellationError())
    }
    return action
  }

  /// Refuses every sender waiting for room: the core has begun to shut down.
  func refuseWaiters() {
    let refused = machine.withLock { machine in
      defer { noteFigures(machine) }
      return machine.refuseWaiters()
    }
    for waiter in refused { waiter.resume(throwing: CoreError.shutDown) }
  }

  /// Resumes what a report admitted or refused, outside the lock.
  @inlinable
  func resume(_ admission: MailboxStateMachine<Element, Waiter>.Admission) {
    var first = admission.startsDrain
    for waiter in admission.admitted {
      // The first admitted sender starts the drain, if one is needed.
      waiter.resume(returning: first ? .startDrain : .enqueued)
      first = false
    }
    for waiter in admission.refused { waiter.resume(throwing: CoreError.shutDown) }
  }

  /// For the drain task, once the backlog is empty: every pending element,
  /// swapped into the emptied buffer `spare`, or `nil` when there are none
  /// (then, unless `stayingScheduled`, the drain is over). Taking makes no
  /// room: `report(reduced:)` does.
  @inlinable
  func takeBatch(from spare: inout [Element], stayingScheduled: Bool, pendingIfOver slice: Int) -> [Element]? {
    var batch: [Element] = []
    swap(&batch, &spare)
    let took = machine.withLock { machine in
      let took = machine.takeBatch(into: &batch, stayingScheduled: stayingScheduled)
      pendingFlag.store(batch.count > slice, ordering: .relaxed)
      return took
    }
    guard took else {
      swap(&batch, &spare)
      return nil
    }
    return batch
  }

  /// The pending elements, possibly none, swapped into the core's emptied
  /// buffer `spare`; the drain stays scheduled.
  @inlinable
  func flush(from spare: inout [Element]) -> [Element] {
    var batch: [Element] = []
    swap(&batch, &spare)
    machine.withLock { machine in
      defer { pendingFlag.store(false, ordering: .relaxed) }
      machine.flush(into: &batch)
    }
    return batch
  }

  /// Reports `reduced` elements just reduced, admitting waiters into the
  /// room made (resumed outside the lock).
  @inlinable
  func report(reduced: Int) {
    let admission = machine.withLock { machine in
      let admission = machine.report(reduced: reduced, accepted: lifecycle.acceptsOutsideActions)
      if !admission.admitted.isEmpty { pendingFlag.store(true, ordering: .releasing) }
      noteFigures(machine)
      return admission
    }
    resume(admission)
  }

  /// Gives back a reduced batch's buffer, emptied, as the core's `spare`,
  /// for its capacity.
  @inlinable
  static func recycle(_ batch: inout [Element], into spare: inout [Element]) {
    batch.removeAll(keepingCapacity: true)
    swap(&batch, &spare)
  }
}
