/// What ``Core/send(_:)`` and ``ScopedCore/send(_:)`` did with an action.
///
/// ```swift
/// switch core.send(.request(id)) {
/// case .accepted: break                      // it will be reduced
/// case .mailboxFull: reply(.tooManyRequests) // a bounded mailbox: shed load, or `try await core.enqueue(…)`
/// case .shutDown, .childRemoved: reply(.unavailable)
/// }
/// ```
///
/// Only ``accepted`` means the action will be reduced; every other case
/// means it was not accepted and nothing of it remains in the core.
public enum SendResult: Sendable, Hashable {
  /// The core accepted the action; it will be reduced, after the actions
  /// this task sent before it.
  ///
  /// ```swift
  /// guard core.send(.refresh) == .accepted else { return }
  /// ```
  case accepted
  /// The core was made with a `mailboxCapacity` and its mailbox holds that
  /// many actions, or senders wait for room before this one: the action
  /// was not accepted. Retry later, or use ``Core/enqueue(_:)``, which waits
  /// for room.
  ///
  /// ```swift
  /// if core.send(.sample(reading)) == .mailboxFull { droppedSamples += 1 }
  /// ```
  case mailboxFull
  /// The core has begun to shut down (``Core/hasShutDown``): the action was
  /// not accepted, and no later one will be.
  ///
  /// ```swift
  /// if core.send(.tick) == .shutDown { return }   // stop producing
  /// ```
  case shutDown
  /// The ``ScopedCore``'s child is known to be gone: the action was not
  /// accepted. Only a scoped handle returns it.
  ///
  /// ```swift
  /// if row.send(.toggle) == .childRemoved { dismiss() }
  /// ```
  case childRemoved
}
