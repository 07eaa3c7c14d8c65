import Synchronization

/// One entry in a core's publication lists: how to publish a state to it,
/// its registrations (the observers or subscribers it delivers to), and the
/// key it is found by, if it was made with a key path.
///
/// `publish` is a closure made in `@inlinable` code, so the selector, the
/// comparison and the delivery are compiled for the client's concrete types
/// rather than run as generic code through a protocol witness.
@usableFromInline
struct Subscription<State>: Sendable {
  @usableFromInline let publish: @Sendable (State) -> Void
  @usableFromInline let registrations: any Registrations
  @usableFromInline let key: SelectionKey?

  @inlinable
  init(publish: @escaping @Sendable (State) -> Void, registrations: any Registrations, key: SelectionKey?) {
    self.publish = publish
    self.registrations = registrations
    self.key = key
  }
}

/// What the core needs of the registrations behind one publication entry.
/// Called only from the core's isolation.
@usableFromInline
protocol Registrations: AnyObject, Sendable {
  /// Drops the ones whose consumers have ended, and returns how many are
  /// left (none: the core drops the entry).
  func removeEnded() -> Int
  /// The core has ended: each gets what it has not taken yet, then ends.
  func finish()
}

/// A selector reading the value at `keyPath`: for a stored property of a
/// struct, a load at the property's offset (see `FieldOffset`); otherwise
/// through the key path.
@inlinable
func selector<State, Props>(_ keyPath: KeyPath<State, Props> & Sendable) -> @Sendable (State) -> Props {
  if let field = FieldOffset(keyPath) {
    return { state in field.read(state) { $0 } }
  }
  return { $0[keyPath: keyPath] }
}

/// Which registrations may share one publication entry: those made with the
/// same key path, policy and kind (observers or subscribers). A closure
/// selector has no identity, so its registration gets an entry of its own.
@usableFromInline
struct SelectionKey: Hashable, Sendable {
  // Safety: key paths are immutable values; `AnyKeyPath` is only not
  // declared `Sendable`. The key is only hashed and compared, in the core.
  @usableFromInline nonisolated(unsafe) let keyPath: AnyKeyPath
  @usableFromInline let policy: BufferingPolicy
  @usableFromInline let isSubscriber: Bool
  /// For a scoped handle's group, over its child's state (see
  /// `GroupJoin.scoped`), the child's path: never shared with the core's
  /// own groups, over its state, nor another child's.
  @usableFromInline let scope: ScopePath?

  @inlinable
  init(keyPath: AnyKeyPath, policy: BufferingPolicy, isSubscriber: Bool, scope: ScopePath? = nil) {
    self.keyPath = keyPath
    self.policy = policy
    self.isSubscriber = isSubscriber
    self.scope = scope
  }
}
