import Synchronization

/// The number of observers registered with one core. Shared by the core and
/// its cells, so an observer that ends on the consumer's side (break, cancel,
/// drop) is counted out at once, without a hop to the core.
@usableFromInline
final class ObserverCounter: Sendable {
  @usableFromInline let value = Atomic<Int>(0)

  @inlinable
  init() {}
}

/// One observer's mailbox between the core and the consuming task: the core
/// delivers into it, the consumer awaits from it. Runs `ObserverStateMachine`
/// under a `Mutex` and resumes continuations only after the lock is released.
///
/// The cell never refers to the core, so observers do not keep a core alive.
@usableFromInline
final class ObserverCell<Element: Sendable>: ObserverLifetime {
  @usableFromInline let machine: Locked<ObserverStateMachine<Element>>
  @usableFromInline let counter: ObserverCounter
  /// The last value the core delivered, kept by the core's side of the
  /// subscription for deduplication, outside the lock.
  // Safety: read and written only by the subscription's `publish`, which the
  // core calls from its own isolation, one call at a time; the consumer's
  // side never touches it.
  @usableFromInline nonisolated(unsafe) var lastDelivered: Element?

  @usableFromInline
  init(policy: BufferingPolicy, counter: ObserverCounter) {
    self.machine = Locked(ObserverStateMachine(policy: policy))
    self.counter = counter
    counter.value.add(1, ordering: .relaxed)
  }

  /// `false` once either side has ended; the core then drops the cell.
  @usableFromInline
  var isActive: Bool {
    machine.withLock { $0.phase == .active }
  }

  /// Called by the core, inside its isolation, with a value that is not a
  /// duplicate (the core's side of the subscription compares).
  @inlinable
  func deliver(_ element: Element) {
    let resumption = machine.withLock { $0.deliver(element) }
    resumption?.resume()
  }

  /// The core has ended: the consumer takes what is buffered, then `nil`.
  @usableFromInline
  func finish() {
    let (endedActive, resumption) = machine.withLock { $0.finish() }
    if endedActive { counter.value.subtract(1, ordering: .relaxed) }
    resumption?.resume()
  }

  /// The consumer has ended: the core stops delivering to it.
  @usableFromInline
  func cancel() {
    let (endedActive, resumption) = machine.withLock { $0.cancel() }
    if endedActive { counter.value.subtract(1, ordering: .relaxed) }
    resumption?.resume()
  }

  func makeIterator() {
    let isFirst = machine.withLock { $0.makeIterator() }
    precondition(
      isFirst,
      "AsyncCore: a CoreStream is consumed by one loop; call states() or observe(_:) again for another observer"
    )
  }

  func streamReleased() {
    if machine.withLock({ $0.endsWhenStreamReleased }) { cancel() }
  }

  // Inlinable: the consumer's side of every wake-up, compiled for the
  // client's element type instead of run as generic code.
  @inlinable
  func next(isolation actor: isolated (any Actor)?) async -> Element? {
    // A cancelled consumer ends, as other async sequences do, rather than
    // taking what happens to be buffered.
    if Task.isCancelled {
      cancel()
      return nil
    }
    if case .return(let element) = machine.withLock({ $0.next() }) {
      return element
    }
    return await withTaskCancellationHandler {
      await withUnsafeContinuation(isolation: actor) { continuation in
        let resumption = machine.withLock { $0.suspend(continuation) }
        resumption?.resume()
      }
    } onCancel: {
      cancel()
    }
  }
}

extension ObserverStateMachine.Resumption where Element: Sendable {
  /// Safety of the unsafe continuation: the state machine hands each parked
  /// continuation out exactly once (it clears `waiter` as it does), so every
  /// continuation is resumed exactly once.
  @inlinable
  func resume() {
    continuation.resume(returning: element)
  }
}
