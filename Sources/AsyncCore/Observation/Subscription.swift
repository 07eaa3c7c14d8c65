import Synchronization

/// The core's side of one state observer: how to publish a state to it.
///
/// `publish` selects from the state, drops the value if it duplicates the
/// last one published to this observer, and delivers the rest: an observer
/// whose value did not change costs its selector and one comparison, no
/// lock. It is a closure made in `@inlinable` code, so the selector, the
/// comparison and the delivery are compiled for the client's concrete types
/// rather than run as generic code through a protocol witness.
@usableFromInline
struct Subscription<State>: Sendable {
  @usableFromInline let publish: @Sendable (State) -> Void
  @usableFromInline let observer: any AnyObserver

  @inlinable
  init<Props: Sendable>(
    observer: Observer<Props>,
    select: @escaping @Sendable (State) -> Props,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?
  ) {
    if let isDuplicate {
      self.publish = { state in
        let props = select(state)
        if let previous = observer.lastPublished, isDuplicate(previous, props) { return }
        observer.lastPublished = props
        observer.deliver(props, isDuplicate: isDuplicate)
      }
    } else {
      self.publish = { state in observer.deliver(select(state)) }
    }
    self.observer = observer
  }

  /// A synchronous subscriber: `publish` selects, drops a duplicate of the
  /// last value it was called with, and calls `body`, unless it has ended.
  @inlinable
  init<Props: Sendable>(
    subscriber: SubscriberCallback<Props>,
    select: @escaping @Sendable (State) -> Props,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?,
    body: @escaping @Sendable (Props) -> Void
  ) {
    self.publish = { state in
      guard subscriber.active.load(ordering: .relaxed) else { return }
      let props = select(state)
      if let isDuplicate, let last = subscriber.last, isDuplicate(last, props) { return }
      subscriber.last = props
      body(props)
    }
    self.observer = subscriber
  }
}

/// `==` for values of `T` whose dynamic type is `Equatable`, whatever the
/// static type at the call site: observing deduplicates `Equatable` values
/// by default in generic code, and behind existentials (`any Sendable`),
/// too. (Statically `Equatable` values take overloads that compile `==`
/// directly; this is the slower, dynamic path. Values that are not
/// `Equatable` compare as different.)
@usableFromInline
func dynamicEquality<T>(_ type: T.Type) -> @Sendable (T, T) -> Bool {
  { lhs, rhs in
    guard let lhs = lhs as? any Equatable else { return false }
    return lhs.isEqual(to: rhs)
  }
}

extension Equatable {
  fileprivate func isEqual(to other: Any) -> Bool {
    guard let other = other as? Self else { return false }
    return self == other
  }
}
