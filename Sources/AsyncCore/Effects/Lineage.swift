/// The work one `dispatch` started: its effects, the follow-up actions they
/// sent, and the effects those started, transitively. What
/// ``EffectHandle/finish()`` waits for.
///
/// A count of outstanding work and its waiters, under a lock; resumed after.
@usableFromInline
final class Lineage: Sendable {
  private let state = Locked(LineageState())
  /// The core's effects, which `cancel()` reaches.
  private let registry: EffectRegistry

  @usableFromInline
  init(registry: EffectRegistry) {
    self.registry = registry
  }

  /// One more piece of work: an effect registered or a follow-up queued.
  /// Returns whether the lineage was cancelled (an effect registered now
  /// starts cancelled).
  @usableFromInline
  @discardableResult
  func enter() -> Bool {
    state.withLock { $0.enter() }
  }

  /// Cancels every effect of the lineage in flight, and those its queued
  /// follow-ups start later (see `EffectHandle.cancel()`).
  func cancel() {
    // The flag first: an effect registered after the look below sees it.
    state.withLock { $0.isCancelled = true }
    registry.cancel(lineage: self)
  }

  /// A piece of work is done.
  @usableFromInline
  func leave() {
    Self.wake(leaveDeferringWakeUps())
  }

  /// Leaves, returning the waiters to resume once the caller's lock is
  /// released (the registry leaves inside its lock).
  func leaveDeferringWakeUps() -> [UnsafeContinuation<Void, Never>] {
    state.withLock { $0.leave() }
  }

  static func wake(_ waiters: [UnsafeContinuation<Void, Never>]) {
    // Safety of the unsafe continuations: each is removed from the state
    // under the lock before it is resumed, here or on cancellation, so it
    // is resumed exactly once.
    for waiter in waiters { waiter.resume() }
  }

  var isZero: Bool {
    state.withLock { $0.count == 0 }
  }

  /// Waits until the count is zero, or the waiting task is cancelled;
  /// returns whether the count is zero.
  func waitUntilZero() async -> Bool {
    let id = state.withLock { $0.makeWaiterID() }
    await withTaskCancellationHandler {
      await withUnsafeContinuation { continuation in
        // Checked under the lock `onCancel` takes too: a cancellation either
        // happened before (the flag is set) or will find the waiter.
        let parked = state.withLock { $0.park(id, continuation, isCancelled: Task.isCancelled) }
        if !parked { continuation.resume() }
      }
    } onCancel: {
      state.withLock { $0.removeWaiter(id) }?.resume()
    }
    return isZero
  }
}

/// A lineage's count and its waiters, keyed by id. Pure.
struct LineageState {
  private(set) var count = 0
  /// Set by `EffectHandle.cancel()`.
  var isCancelled = false
  private var nextWaiter = 0
  private var waiters: [Int: UnsafeContinuation<Void, Never>] = [:]

  /// Returns whether the lineage was cancelled.
  mutating func enter() -> Bool {
    count += 1
    return isCancelled
  }

  /// Returns the waiters to resume when the count reaches zero.
  mutating func leave() -> [UnsafeContinuation<Void, Never>] {
    guard count > 0 else { programmerError("internal: a lineage was left more often than entered") }
    count -= 1
    guard count == 0, !waiters.isEmpty else { return [] }
    defer { waiters = [:] }
    return Array(waiters.values)
  }

  mutating func makeWaiterID() -> Int {
    nextWaiter += 1
    return nextWaiter
  }

  /// Parks waiter `id` unless the count is zero or it was cancelled;
  /// returns whether it parked.
  mutating func park(_ id: Int, _ continuation: UnsafeContinuation<Void, Never>, isCancelled: Bool) -> Bool {
    guard count > 0, !isCancelled else { return false }
    waiters[id] = continuation
    return true
  }

  mutating func removeWaiter(_ id: Int) -> UnsafeContinuation<Void, Never>? {
    waiters.removeValue(forKey: id)
  }
}
