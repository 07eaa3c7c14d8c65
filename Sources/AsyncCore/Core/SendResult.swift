/// What ``Core/send(_:)``, ``ScopedCore/send(_:)`` and an effect's
/// ``Send`` did with an action.
///
/// ```swift
/// switch core.send(.request(id)) {
/// case .accepted: break                      // it will be reduced
/// case .mailboxFull: reply(.tooManyRequests) // a bounded mailbox: shed load, or `try await core.enqueue(…)`
/// default: reply(.unavailable)               // shut down (a core's send returns no other case)
/// }
/// ```
///
/// Only ``accepted`` means the action will be reduced; every other case
/// means it was not accepted and nothing of it remains in the core. A
/// core's `send` returns ``accepted``, ``mailboxFull`` or ``shutDown``; a
/// scoped handle's, ``childRemoved`` too; an effect's `send`,
/// ``accepted``, ``shutDown``, ``effectCancelled`` or ``effectEnded``.
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
  /// not accepted, and no later one will be. An effect's `send` returns it
  /// once an immediate shutdown has begun, or the core has stopped or been
  /// released (during a graceful shutdown, effects' actions are accepted).
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
  /// The effect whose ``Send`` this is was cancelled: the action was not
  /// accepted, and no later one of this effect will be. Only an effect's
  /// `send` returns it.
  ///
  /// ```swift
  /// return .run { send in
  ///   for await reading in sensor.readings {
  ///     if await send(.reading(reading)) == .effectCancelled { return }
  ///   }
  /// }
  /// ```
  case effectCancelled
  /// The effect whose ``Send`` this is has ended (its operation and its
  /// `catch:` handler returned): the action was not accepted. The `Send`
  /// outlived its effect, in a `Task {}` or a closure it was handed to.
  /// Only an effect's `send` returns it.
  ///
  /// ```swift
  /// return .run { send in
  ///   Task { _ = await send(.late) }   // .effectEnded if it runs after the effect returned
  /// }
  /// ```
  case effectEnded
}
