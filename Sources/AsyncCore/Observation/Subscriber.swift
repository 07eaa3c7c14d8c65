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

/// The core's side of one synchronous subscriber: its selector, its
/// comparison, its callback, the last value it was called with, and whether
/// it is still subscribed. One object, so a subscriber costs one allocation
/// besides its ``Subscriber`` token.
@usableFromInline
final class SubscriberCallback<State, Props: Sendable>: AnyObserver {
  @usableFromInline let select: @Sendable (State) -> Props
  @usableFromInline let isDuplicate: (@Sendable (Props, Props) -> Bool)?
  @usableFromInline let body: @Sendable (Props) -> Void
  @usableFromInline let counter: ObserverCounter
  @usableFromInline let active = Atomic<Bool>(true)
  // Safety: read and written only by `publish`, which the core calls from
  // its own isolation, one call at a time; the token never touches it.
  @usableFromInline nonisolated(unsafe) var last: Props?

  @inlinable
  init(
    select: @escaping @Sendable (State) -> Props,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?,
    body: @escaping @Sendable (Props) -> Void,
    counter: ObserverCounter
  ) {
    self.select = select
    self.isDuplicate = isDuplicate
    self.body = body
    self.counter = counter
    counter.value.add(1, ordering: .relaxed)
  }

  @usableFromInline
  var isActive: Bool { active.load(ordering: .acquiring) }

  /// Ends the subscription, counting it out once, from either side.
  @usableFromInline
  func finish() {
    if active.exchange(false, ordering: .acquiringAndReleasing) {
      counter.value.subtract(1, ordering: .relaxed)
    }
  }

  /// Called by the core, inside its isolation and with the re-entry guard
  /// set: selects, drops a duplicate of the last value, calls the body.
  @inlinable
  func publish(_ state: State) {
    guard active.load(ordering: .relaxed) else { return }
    let props = select(state)
    if let isDuplicate, let last, isDuplicate(last, props) { return }
    last = props
    body(props)
  }
}
