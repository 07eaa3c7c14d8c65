import Synchronization

/// A synchronous subscriber's hold on its core: cancel it, or release it,
/// and the core stops calling the subscriber.
///
/// Made by ``Core/subscribe(to:removeDuplicates:buffering:_:)-(KeyPath<State,Props>Sendable,_,_,_)``:
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
  @usableFromInline let registration: SubscriberRegistration

  @usableFromInline
  init(registration: SubscriberRegistration) {
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

/// Whether one synchronous subscriber is still subscribed: shared by its
/// token and its entry in the core's group, so either side can end it.
@usableFromInline
final class SubscriberRegistration: Sendable {
  @usableFromInline let counter: ObserverCounter
  @usableFromInline let active = Atomic<Bool>(true)

  @inlinable
  init(counter: ObserverCounter) {
    self.counter = counter
    counter.value.add(1, ordering: .relaxed)
  }

  @usableFromInline
  var isActive: Bool { active.load(ordering: .acquiring) }

  /// The core's check before each call: it only needs to see an end made
  /// before the publication began (an atomic load, a plain move on x86).
  @inlinable
  var isSubscribed: Bool { active.load(ordering: .relaxed) }

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
