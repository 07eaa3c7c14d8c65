/// An action in the mailbox, with the lineage of the effect that sent it
/// (`nil` for actions from outside), so that a dispatch's effects can be
/// awaited through their follow-up actions.
@usableFromInline
struct Envelope<Action: Sendable>: Sendable {
  @usableFromInline let action: Action
  @usableFromInline let lineage: Lineage?

  @inlinable
  init(action: Action, lineage: Lineage?) {
    self.action = action
    self.lineage = lineage
  }
}

/// The core's inbox for fire-and-forget `send` and effects' follow-ups:
/// pending elements and whether a drain is scheduled, with no locking and no
/// side effects of its own.
///
/// The core keeps it inside a `Locked` mutex; every transition is a
/// `mutating` method whose result tells the caller what to do after the lock
/// is released (start a drain task, reduce a batch, tell the sender it was
/// refused).
///
/// Invariant: `pending` is non-empty only while `isDrainScheduled` is true or
/// the mailbox is closed, so an accepted action always has a drain on its way,
/// and that drain task holds the core alive until the action is reduced.
@usableFromInline
struct MailboxStateMachine<Element> {
  /// What `send` must do once the lock is released.
  @usableFromInline
  enum SendAction: Equatable {
    /// The element is queued; a drain is already on its way.
    case enqueued
    /// The element is queued and nobody will drain it: start a drain.
    case startDrain
    /// The core is shutting down; the element was not accepted.
    case rejected
  }

  /// What the mailbox accepts, narrowing as the core shuts down.
  @usableFromInline
  enum Acceptance {
    case everything
    /// A graceful shutdown: effects still finishing may send follow-ups.
    case followUpsOnly
    case nothing
  }

  @usableFromInline var pending: [Element] = []
  @usableFromInline var isDrainScheduled = false
  @usableFromInline var acceptance = Acceptance.everything

  @inlinable
  init() {}

  @inlinable
  mutating func send(_ element: Element, fromEffect: Bool) -> SendAction {
    guard accepts(fromEffect: fromEffect) else { return .rejected }
    pending.append(element)
    return scheduleDrainIfNeeded()
  }

  @inlinable
  mutating func send(contentsOf elements: [Element]) -> SendAction {
    guard accepts(fromEffect: false) else { return .rejected }
    pending.append(contentsOf: elements)
    return pending.isEmpty ? .enqueued : scheduleDrainIfNeeded()
  }

  @inlinable
  func accepts(fromEffect: Bool) -> Bool {
    switch acceptance {
    case .everything: return true
    case .followUpsOnly: return fromEffect
    case .nothing: return false
    }
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

  /// Called by `dispatch` and `state`: moves pending elements into `batch`
  /// so they are reduced before what the caller does next. The scheduled
  /// drain, if any, still runs and finds the mailbox empty.
  @inlinable
  mutating func flush(into batch: inout [Element]) {
    if !pending.isEmpty { swap(&pending, &batch) }
  }

  /// A shutdown begins: accept no more than `narrowed` from now on (a
  /// shutdown already in progress is never widened again).
  mutating func narrowAcceptance(to narrowed: Acceptance) {
    switch (acceptance, narrowed) {
    case (.everything, _), (.followUpsOnly, .nothing): acceptance = narrowed
    default: break
    }
  }

  /// Refuses every later element and moves what was accepted into `batch`.
  mutating func close(into batch: inout [Element]) {
    acceptance = .nothing
    flush(into: &batch)
  }
}
