/// A count of outstanding work and the tasks waiting for it to reach zero.
///
/// A dispatch's lineage is one (its effects, their follow-up actions and the
/// effects those start), and so is the core's count of effects in flight.
@usableFromInline
final class ActivityCounter: Sendable {
  private struct State {
    var count = 0
    var nextWaiter = 0
    var waiters: [Int: UnsafeContinuation<Void, Never>] = [:]
  }

  private let state = Locked(State())

  @usableFromInline
  init() {}

  @usableFromInline
  func enter() {
    state.withLock { $0.count += 1 }
  }

  @usableFromInline
  func leave() {
    let waiters: [UnsafeContinuation<Void, Never>] = state.withLock { state in
      precondition(state.count > 0, "AsyncCore: activity left more often than entered")
      state.count -= 1
      guard state.count == 0 else { return [] }
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    // Safety of the unsafe continuations: each is removed from `waiters`
    // under the lock before it is resumed, here or on cancellation, so it is
    // resumed exactly once.
    for waiter in waiters { waiter.resume() }
  }

  var isZero: Bool {
    state.withLock { $0.count == 0 }
  }

  /// Waits until the count is zero. With `cancellable`, returns early when
  /// the waiting task is cancelled.
  func waitUntilZero(cancellable: Bool = true) async {
    let id = state.withLock { state -> Int in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    let park = { (continuation: UnsafeContinuation<Void, Never>) in
      let resumeNow = self.state.withLock { state -> Bool in
        // Checked under the lock that `onCancel` takes too: a cancellation
        // either happened before (the flag is set) or will find the waiter.
        if state.count == 0 || (cancellable && Task.isCancelled) { return true }
        state.waiters[id] = continuation
        return false
      }
      if resumeNow { continuation.resume() }
    }
    guard cancellable else {
      await withUnsafeContinuation(park)
      return
    }
    await withTaskCancellationHandler {
      await withUnsafeContinuation(park)
    } onCancel: {
      state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
  }
}

/// The effects one dispatch started, their follow-up actions and the effects
/// those started: what ``EffectHandle/finish()`` waits for.
@usableFromInline
typealias Lineage = ActivityCounter
