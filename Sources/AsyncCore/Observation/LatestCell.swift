import Synchronization

/// The cell the `.latest` observers of one selection share: the core
/// publishes into it once, under one lock, and every parked consumer is
/// resumed after the lock is released. Runs `LatestCellStateMachine` under
/// a lock.
///
/// It never refers to the core, so observers do not keep a core alive.
@usableFromInline
final class LatestCell<Element: Sendable>: Sendable {
  @usableFromInline typealias Ticket = LatestCellStateMachine<Element>.Ticket

  @usableFromInline let machine = Locked(LatestCellStateMachine<Element>())
  @usableFromInline let counter: ObserverCounter
  /// The selection's comparison, which each consumer also applies against
  /// the value it took last (a value equal to it is skipped).
  @usableFromInline let isDuplicate: (@Sendable (Element, Element) -> Bool)?

  @inlinable
  init(counter: ObserverCounter, isDuplicate: (@Sendable (Element, Element) -> Bool)?) {
    self.counter = counter
    self.isDuplicate = isDuplicate
  }

  /// A new consumer, counted in; its first value is the current one.
  @inlinable
  func join() -> Ticket {
    counter.value.add(1, ordering: .relaxed)
    return machine.withLock { $0.join() }
  }

  /// Called by the core, inside its isolation: stores `element` and wakes
  /// every parked consumer with it.
  @inlinable
  func publish(_ element: Element) {
    let published = machine.withLock { machine in
      (woken: machine.publish(element), version: machine.version)
    }
    let delivery = Delivery(element: element, version: published.version)
    for waiter in published.woken { waiter.continuation.resume(returning: delivery) }
  }

  /// The next value for the consumer holding `ticket`, newer than `version`;
  /// `nil` once the consumer or the cell has ended.
  // Inlinable: the consumer's side of every wake-up, compiled for the
  // client's element type instead of run as generic code.
  @inlinable
  func next(_ ticket: Ticket, after version: Int, isolation actor: isolated (any Actor)?) async -> Delivery<Element>? {
    switch machine.withLock({ $0.next(ticket, after: version) }) {
    case .take(let delivery):
      // A cancelled consumer ends, as other async sequences do, rather
      // than taking what happens to be newer. (A parked one is ended by the
      // cancellation handler below, which runs at once if the task is
      // cancelled already.)
      guard !Task.isCancelled else {
        cancel(ticket)
        return nil
      }
      return delivery
    case .end: return nil
    case .suspend: break
    }
    // Safety of the unsafe continuation: the state machine hands each
    // parked continuation out exactly once (a publication, `cancel` or
    // `finish` removes it as it returns it), so it is resumed exactly once.
    return await withTaskCancellationHandler {
      await withUnsafeContinuation(isolation: actor) { continuation in
        if let now = machine.withLock({ $0.suspend(ticket, after: version, continuation) }) {
          continuation.resume(returning: now)
        }
      }
    } onCancel: {
      cancel(ticket)
    }
  }

  /// The consumer ended: it is counted out, and woken with `nil` if parked.
  @usableFromInline
  func cancel(_ ticket: Ticket) {
    let ended = machine.withLock { $0.cancel(ticket) }
    if ended.endedActive { counter.value.subtract(1, ordering: .relaxed) }
    ended.parked?.resume(returning: nil)
  }

  /// The core ended: consumers take what they have not taken, then `nil`.
  @usableFromInline
  func finish() {
    let finished = machine.withLock { $0.finish() }
    counter.value.subtract(finished.ended, ordering: .relaxed)
    for waiter in finished.parked { waiter.continuation.resume(returning: nil) }
  }

  /// Consumers parked, waiting for a newer value (for tests).
  var parkedCount: Int {
    machine.withLock { $0.waiters.count }
  }

  /// Consumers that have not ended.
  @usableFromInline
  var activeCount: Int {
    machine.withLock { $0.activeCount }
  }
}

extension LatestCell: GroupMember {
  @inlinable
  func receive(_ props: Element, isDuplicate: (@Sendable (Element, Element) -> Bool)?) {
    publish(props)
  }
}
