import Synchronization

/// A synchronous subscriber's hold on its core: cancel it, or release it,
/// and the core stops calling the subscriber.
///
/// Made by ``Core/subscribe(to:buffering:_:)``:
///
/// ```swift
/// let subscriber = await core.subscribe(to: \.count) { count in
///   print("count is", count)   // inside the core: quick, and never blocking
/// }
/// // …
/// subscriber.cancel()          // or let it go: releasing it cancels too
/// ```
///
/// - Important: Keep the subscriber for as long as the callback should be
///   called: when the last reference to it goes, the subscription ends.
///   A call the core has already begun when ``cancel()`` is made from
///   another task still completes; none begins after the core has seen the
///   cancellation, at its next publication.
public final class Subscriber: Sendable {
  @usableFromInline let registration: any AnyObserver

  @usableFromInline
  init(registration: any AnyObserver) {
    self.registration = registration
  }

  deinit {
    registration.finish()
  }

  /// Ends the subscription. Calling it again does nothing.
  ///
  /// ```swift
  /// subscriber.cancel()
  /// #expect(!subscriber.isActive)
  /// ```
  public func cancel() {
    registration.finish()
  }

  /// Whether the core still calls the subscriber: `false` once it was
  /// cancelled or released, or the core has shut down.
  ///
  /// ```swift
  /// await core.shutdown()
  /// #expect(!subscriber.isActive)
  /// ```
  public var isActive: Bool { registration.isActive }
}

/// The state of one synchronous subscriber: the last value it was called
/// with and whether it is still subscribed. Its selector, comparison and
/// callback live in the subscription's `publish` closure (see
/// `Subscription.init(subscriber:select:isDuplicate:body:)`), where calling
/// them costs no retain and release per publication.
@usableFromInline
final class SubscriberCallback<Props: Sendable>: AnyObserver {
  @usableFromInline let counter: ObserverCounter
  @usableFromInline let active = Atomic<Bool>(true)
  // Exclusivity unchecked: no two accesses overlap (see Safety), so the
  // dynamic check (a thread-local lookup per access) could only pass.
  // Safety: only the subscription's `publish` reads and writes it, from the
  // core's isolation, one call at a time; the token never does.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var last: Props?

  @inlinable
  init(counter: ObserverCounter) {
    self.counter = counter
    counter.value.add(1, ordering: .relaxed)
  }

  @usableFromInline
  var isActive: Bool { active.load(ordering: .acquiring) }

  /// Ends the subscription, counting it out once, from either side, and
  /// asks the core to drop it (with its callback) at once.
  @usableFromInline
  func finish() {
    if active.exchange(false, ordering: .acquiringAndReleasing) {
      counter.value.subtract(1, ordering: .relaxed)
      counter.requestPrune()
    }
  }
}
