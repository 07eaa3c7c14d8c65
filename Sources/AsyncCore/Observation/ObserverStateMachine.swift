/// The delivery state of one observer: what the consumer has not taken, the
/// last value it took, its parked continuation, and whether either side
/// ended. Pure: `Observer` runs it under a lock and resumes after; a
/// `removeDuplicates:` comparison is asked of the caller, as an action.
///
/// Under `.latest`, a value equal to the one the consumer holds clears any
/// buffered value (take 0, publish 1, publish 0: nothing to take); the core
/// has already compared with its last publication, so only an observer with
/// a value waiting compares again.
///
/// Phases: `active`; `finished` (the core ended: the consumer still gets
/// what is buffered, then `nil`); `cancelled` (the consumer ended: the buffer
/// is dropped).
@usableFromInline
struct ObserverStateMachine<Element> {
  @usableFromInline
  enum Phase: Equatable {
    case active
    case finished
    case cancelled
  }

  /// A continuation to resume once the lock is released, and with what.
  @usableFromInline
  struct Resumption {
    @usableFromInline let continuation: UnsafeContinuation<Element?, Never>
    @usableFromInline let element: Element?

    @inlinable
    init(continuation: UnsafeContinuation<Element?, Never>, element: Element?) {
      self.continuation = continuation
      self.element = element
    }
  }

  @usableFromInline
  enum NextAction {
    /// Return this to the consumer now (`nil`: the sequence has ended).
    case `return`(Element?)
    /// Nothing is buffered: park the consumer.
    case suspend
  }

  /// What the consumer has not taken yet, by policy: one enum, as every
  /// observer's memory counts.
  @usableFromInline
  enum Buffer {
    /// `.latest`: the newest undelivered element, and the last one the
    /// consumer took (what it holds, for deduplication).
    case latest(pending: Element?, lastTaken: Element?)
    /// `.all`: undelivered elements in order; `head` is the next to take,
    /// so taking one is O(1). Both reset once the consumer catches up.
    case all(queue: [Element], head: Int)
  }

  // Internal for `deliver` and `store`, which the client specializes (they
  // are on the publish path); everything else stays in this file.
  @usableFromInline var buffer: Buffer
  @usableFromInline var waiter: UnsafeContinuation<Element?, Never>?
  private var hasIterator = false
  @usableFromInline private(set) var phase = Phase.active

  init(policy: BufferingPolicy) {
    switch policy {
    case .latest: buffer = .latest(pending: nil, lastTaken: nil)
    case .all: buffer = .all(queue: [], head: 0)
    }
  }

  /// What `deliver` asks of the observer, which performs it after the lock
  /// is released.
  @usableFromInline
  enum DeliverAction {
    /// Nothing to do: the element is buffered, or dropped (the observer
    /// has ended, or the element is what the consumer holds).
    case none
    /// Hand the element to the parked consumer.
    case resume(Resumption)
    /// A value is waiting untaken: run the observer's comparison, user
    /// code, outside the lock, on the value the consumer holds (this one)
    /// and the new element, then call `deliver(_:isDuplicateOfTaken:)`.
    case compare(Element)
  }

  /// The core publishes `element`, which differs from its last publication.
  /// Never runs the comparison (kept by the group): returns `.compare` for
  /// the caller to run without the lock.
  @inlinable
  mutating func deliver(_ element: Element, hasComparison: Bool) -> DeliverAction {
    guard phase == .active else { return .none }
    // With nothing pending, the consumer holds the last value published,
    // which the core has just found `element` differs from: no comparison.
    if hasComparison, case .latest(pending: .some, lastTaken: .some(let lastTaken)) = buffer {
      return .compare(lastTaken)
    }
    return store(element).map(DeliverAction.resume) ?? .none
  }

  /// The second half of a delivery that returned `.compare`. If the consumer
  /// took the pending value meanwhile, `element` differs from what it holds,
  /// and `isDuplicate` does not matter.
  @inlinable
  mutating func deliver(_ element: Element, isDuplicateOfTaken isDuplicate: Bool) -> Resumption? {
    guard phase == .active else { return nil }
    if isDuplicate, case .latest(pending: .some, let lastTaken) = buffer {
      // What the consumer already holds: nothing new to take.
      buffer = .latest(pending: nil, lastTaken: lastTaken)
      return nil
    }
    return store(element)
  }

  /// Buffers `element`, or hands it to the parked consumer (returned).
  @inlinable
  mutating func store(_ element: Element) -> Resumption? {
    switch buffer {
    case .latest(_, let lastTaken):
      if let waiter {
        // A parked consumer implies an empty buffer: hand the element over.
        self.waiter = nil
        buffer = .latest(pending: nil, lastTaken: element)
        return Resumption(continuation: waiter, element: element)
      }
      buffer = .latest(pending: element, lastTaken: lastTaken)
    case .all(var queue, let head):
      if let waiter {
        self.waiter = nil
        return Resumption(continuation: waiter, element: element)
      }
      // Release the enum's reference first, so appending does not copy.
      buffer = .latest(pending: nil, lastTaken: nil)
      queue.append(element)
      buffer = .all(queue: queue, head: head)
    }
    return nil
  }

  /// The consumer asks for the next element.
  @inlinable
  mutating func next() -> NextAction {
    if let element = takeBuffered() { return .return(element) }
    return phase == .active ? .suspend : .return(nil)
  }

  /// The consumer parks. If something arrived (or either side ended) since
  /// `next()` answered `.suspend`, the continuation is resumed at once.
  @inlinable
  mutating func suspend(_ continuation: UnsafeContinuation<Element?, Never>) -> Resumption? {
    if waiter != nil {
      programmerError("a CoreStream iterator was awaited from two tasks at once; each loop needs its own observer")
    }
    if let element = takeBuffered() {
      return Resumption(continuation: continuation, element: element)
    }
    guard phase == .active else {
      return Resumption(continuation: continuation, element: nil)
    }
    waiter = continuation
    return nil
  }

  /// The core ended. Returns whether this ended an active observer (so it is
  /// counted out once) and the parked consumer to wake with `nil`.
  mutating func finish() -> (endedActive: Bool, resumption: Resumption?) {
    guard phase == .active else { return (false, nil) }
    phase = .finished
    return (true, takeWaiterForEnd())
  }

  /// The consumer ended. Drops the buffer; returns as `finish()` does.
  mutating func cancel() -> (endedActive: Bool, resumption: Resumption?) {
    switch buffer {
    case .latest: buffer = .latest(pending: nil, lastTaken: nil)
    case .all: buffer = .all(queue: [], head: 0)
    }
    guard phase == .active else { return (false, takeWaiterForEnd()) }
    phase = .cancelled
    return (true, takeWaiterForEnd())
  }

  /// An observation is consumed by one iterator; returns `false` for a second.
  mutating func makeIterator() -> Bool {
    defer { hasIterator = true }
    return !hasIterator
  }

  /// The stream value was released. Only an observation nobody iterates ends
  /// here; an iterator that outlives its stream keeps it alive.
  var endsWhenStreamReleased: Bool { !hasIterator }

  private mutating func takeWaiterForEnd() -> Resumption? {
    guard let waiter else { return nil }
    self.waiter = nil
    return Resumption(continuation: waiter, element: nil)
  }

  @inlinable
  mutating func takeBuffered() -> Element? {
    switch buffer {
    case .latest(let pending, _):
      guard let pending else { return nil }
      buffer = .latest(pending: nil, lastTaken: pending)
      return pending
    case .all(var queue, var head):
      guard head < queue.count else { return nil }
      // Release the enum's reference first, so emptying does not copy.
      buffer = .latest(pending: nil, lastTaken: nil)
      let element = queue[head]
      head += 1
      if head == queue.count {
        queue.removeAll(keepingCapacity: true)
        head = 0
      }
      buffer = .all(queue: queue, head: head)
      return element
    }
  }
}
