#if Postgres
  /// Why a ``PostgresEntityStore`` or one of its journals failed.
  ///
  /// ```swift
  /// do {
  ///   try await carts.dispatch(.add("tea"), to: "ada")
  /// } catch let error as PostgresStoreError {
  ///   if case .ownedElsewhere(_, let owner?) = error { redirect(to: owner) }
  /// }
  /// ```
  public enum PostgresStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server cannot be reached, or the connection to it could not be
    /// made: nothing was read or written. A later call connects again.
    ///
    /// ```swift
    /// if case .unavailable = error { respond(status: 503) }
    /// ```
    case unavailable(message: String)
    /// Another store holds `entity` (its id's JSON) active: `owner` is the
    /// `owner` name it was opened with, or `nil` if it let go before it could
    /// be read.
    ///
    /// ```swift
    /// if case .ownedElsewhere(_, let owner?) = error { redirect(to: owner) }
    /// ```
    case ownedElsewhere(entity: String, owner: String?)
    /// The store's connection ended while it held `entity`: the server let
    /// go of its ownership, another store may hold it now, so this journal
    /// writes nothing more. The registry activates the entity anew on its
    /// next use.
    ///
    /// A write whose connection ended while its commit was on the way is in
    /// doubt: the server may have committed it before the end. The entity's
    /// next activation reads it if it did, so make a retried action
    /// idempotent (a reference the reducer ignores the second time).
    ///
    /// ```swift
    /// if case .ownershipLost(let entity) = error { print("\(entity) moved") }
    /// ```
    case ownershipLost(entity: String)
    /// Record `sequence` of `entity` was already written by another writer:
    /// this append was refused, and the history kept as it was.
    ///
    /// ```swift
    /// if case .conflict(let entity, let sequence) = error { print(entity, sequence) }
    /// ```
    case conflict(entity: String, sequence: UInt64)
    /// The tables under this namespace hold other state or action types, or
    /// another schema version (their identities, as `expected` and `found`
    /// spell them).
    ///
    /// ```swift
    /// if case .incompatible(let expected, let found) = error { print(expected, found) }
    /// ```
    case incompatible(expected: String, found: String)
    /// The records of `entity` skip from one sequence number to another:
    /// `sequence` is the first one missing.
    ///
    /// ```swift
    /// if case .damaged(let entity, let sequence) = error { print(entity, sequence) }
    /// ```
    case damaged(entity: String, sequence: UInt64)
    /// The codec could not encode an id, an action or a state, or an id's
    /// JSON is longer than ``PostgresEntityStore/maximumKeyBytes``.
    ///
    /// ```swift
    /// if case .encodingFailed(let description) = error { print(description) }
    /// ```
    case encodingFailed(description: String)
    /// The codec could not decode record (or snapshot) `sequence` of `entity`.
    ///
    /// ```swift
    /// if case .decodingFailed(let entity, let sequence, _) = error { print(entity, sequence) }
    /// ```
    case decodingFailed(entity: String, sequence: UInt64, description: String)
    /// The server refused a statement: `code` is its SQLSTATE.
    ///
    /// ```swift
    /// if case .server(let code, let message) = error { print(code, message) }
    /// ```
    case server(code: String, message: String)
    /// The store was closed.
    ///
    /// ```swift
    /// if error == .closed { return }
    /// ```
    case closed

    /// What went wrong, in a sentence.
    ///
    /// ```swift
    /// print(PostgresStoreError.ownedElsewhere(entity: #""ada""#, owner: "node-2"))
    /// // entity "ada" is active in another store ("node-2")
    /// ```
    public var description: String {
      switch self {
      case .unavailable(let message):
        return "the PostgreSQL server is unavailable: \(message)"
      case .ownedElsewhere(let entity, let owner?):
        return "entity \(entity) is active in another store (\"\(owner)\")"
      case .ownedElsewhere(let entity, nil):
        return "entity \(entity) is active in another store"
      case .ownershipLost(let entity):
        return "the connection to PostgreSQL ended while this store held entity \(entity): it writes no more for it"
      case .conflict(let entity, let sequence):
        return "record \(sequence) of entity \(entity) was already written by another writer"
      case .incompatible(let expected, let found):
        return "the tables hold \(found), not \(expected)"
      case .damaged(let entity, let sequence):
        return "entity \(entity) has no record \(sequence), though records follow it"
      case .encodingFailed(let description):
        return "could not encode: \(description)"
      case .decodingFailed(let entity, let sequence, let description):
        return "could not decode record \(sequence) of entity \(entity): \(description)"
      case .server(let code, let message):
        return "PostgreSQL refused a statement (SQLSTATE \(code)): \(message)"
      case .closed:
        return "the store is closed"
      }
    }
  }
#endif
