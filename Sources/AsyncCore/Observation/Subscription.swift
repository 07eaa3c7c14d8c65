import Synchronization

/// One entry in a core's publication lists: how to publish to it, its
/// registrations, and its key if made with a key path. `publish` is made in
/// `@inlinable` code, so it is compiled for the client's concrete types.
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

/// Which registrations share one publication entry: same key path, policy
/// and kind (a closure selector has no identity to share).
@usableFromInline
struct SelectionKey: Hashable, Sendable {
  // Safety: key paths are immutable values; `AnyKeyPath` is only not
  // declared `Sendable`. The key is only hashed and compared, in the core.
  @usableFromInline nonisolated(unsafe) let keyPath: AnyKeyPath
  @usableFromInline let policy: BufferingPolicy
  @usableFromInline let isSubscriber: Bool
  /// For a scoped handle's group, the child's path, so it is never shared
  /// with the core's groups or another child's.
  @usableFromInline let scope: ScopePath?

  @inlinable
  init(keyPath: AnyKeyPath, policy: BufferingPolicy, isSubscriber: Bool, scope: ScopePath? = nil) {
    self.keyPath = keyPath
    self.policy = policy
    self.isSubscriber = isSubscriber
    self.scope = scope
  }
}
