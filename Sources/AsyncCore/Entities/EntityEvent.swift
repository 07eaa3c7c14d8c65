/// What happened to an entity: for logs, for a service's output, and for
/// tests to wait on.
///
/// ```swift
/// for await event in carts.events() {
///   if case .passivated(let id) = event { print("stored \(id)") }
/// }
/// ```
public enum EntityEvent<ID: Hashable & Sendable>: Sendable {
  /// The entity's core is ready, from its stored state or a new one.
  ///
  /// ```swift
  /// if case .activated(let id) = event { print("\(id) is active") }
  /// ```
  case activated(ID)
  /// Its state is stored and its core has shut down.
  ///
  /// ```swift
  /// if case .passivated(let id) = event { print("\(id) is stored") }
  /// ```
  case passivated(ID)
  /// It could not be activated (the store's error); what waited for it was refused.
  ///
  /// ```swift
  /// if case .activationFailed(let id, let error) = event { alert("\(id): \(error)") }
  /// ```
  case activationFailed(ID, any Error)
  /// Its state could not be stored; it stays active.
  ///
  /// ```swift
  /// if case .passivationFailed(let id, let error) = event { alert("\(id): \(error)") }
  /// ```
  case passivationFailed(ID, any Error)
}
