import Synchronization

/// The number of observers registered with one core, shared with them so
/// one that ends on the consumer's side is counted out at once, with no hop.
@usableFromInline
final class ObserverCounter: Sendable {
  @usableFromInline let value = Atomic<Int>(0)
  /// How an ended subscriber asks its core to drop it now: its callback may
  /// capture the core. Set once by the core.
  private let pruner = Locked<(@Sendable () -> Void)?>(nil)
  /// Whether a prune is on its way, so a mass release asks for one, not one
  /// per subscriber.
  private let isPruneScheduled = Atomic<Bool>(false)

  @inlinable
  init() {}

  func setPruner(_ prune: @escaping @Sendable () -> Void) {
    pruner.withLock { $0 = prune }
  }

  /// Asks the core, without waiting, to drop its ended registrations,
  /// unless it has been asked and has not begun yet.
  func requestPrune() {
    guard !isPruneScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let prune = pruner.withLock { $0 }
    prune?()
  }

  /// The core begins a prune: registrations that end from now on ask again.
  func beginPrune() {
    isPruneScheduled.store(false, ordering: .releasing)
  }
}

/// One observer: runs `ObserverStateMachine` under a lock and resumes after
/// releasing it. It never refers to the core, so it keeps no core alive.
@usableFromInline
final class Observer<Element: Sendable>: Sendable {
  @usableFromInline let machine: Locked<ObserverStateMachine<Element>>
  @usableFromInline let counter: ObserverCounter

  @usableFromInline
  init(policy: BufferingPolicy, counter: ObserverCounter) {
    self.machine = Locked(ObserverStateMachine(policy: policy))
    self.counter = counter
    counter.value.add(1, ordering: .relaxed)
  }

  @usableFromInline
  var isActive: Bool {
    machine.withLock { $0.phase == .active }
  }

  /// Called by the core with the observer's comparison, if any, which is
  /// user code and so runs after the lock is released.
  @inlinable
  func deliver(_ element: Element, isDuplicate: (@Sendable (Element, Element) -> Bool)? = nil) {
    switch machine.withLock({ $0.deliver(element, hasComparison: isDuplicate != nil) }) {
    case .none:
      return
    case .resume(let resumption):
      resumption.resume()
    case .compare(let held):
      deliver(element, comparingWith: held, isDuplicate: isDuplicate)
    }
  }

  /// The rare second half of a delivery: compares `element` with what the
  /// consumer holds, without the lock. Out of line, to keep the inlined
  /// common delivery small.
  @inlinable
  @inline(never)
  func deliver(
    _ element: Element, comparingWith held: Element, isDuplicate: (@Sendable (Element, Element) -> Bool)?
  ) {
    let isDuplicateOfHeld = isDuplicate?(held, element) ?? false
    let resumption = machine.withLock { $0.deliver(element, isDuplicateOfTaken: isDuplicateOfHeld) }
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

  /// A loop begins; a second one is a programmer error.
  func makeIterator() {
    if !machine.withLock({ $0.makeIterator() }) {
      programmerError(
        "a CoreStream is consumed by one loop; call states() or observe(_:) again for another observer"
      )
    }
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
