import AsyncCore

/// Why a ``SQLiteEntityStore`` or one of its journals failed.
///
/// ```swift
/// do {
///   let journal = try await store.journal(for: "ada")
/// } catch SQLiteStoreError.damaged(let entity, let sequence) {
///   alert("\(entity) is damaged at record \(sequence)")
/// }
/// ```
public enum SQLiteStoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The path leads to something other than a regular file: a directory,
  /// a FIFO, a device or a socket. Nothing was opened or written.
  ///
  /// ```swift
  /// // try SQLiteEntityStore<String, Cart, CartAction>(path: "/dev/null") throws .notAFile
  /// ```
  case notAFile(path: String)
  /// Another store has the database open, in this process or another.
  ///
  /// ```swift
  /// if case .locked(let path) = error { print("\(path) is in use") }
  /// ```
  case locked(path: String)
  /// The database file cannot be written (its permissions, or a read-only
  /// file system): every append would fail, so the store does not open.
  ///
  /// ```swift
  /// if case .readOnly(let path) = error { print("cannot write \(path)") }
  /// ```
  case readOnly(path: String)
  /// The file is not a SQLite database, or is another program's database.
  /// It is left as it was.
  ///
  /// ```swift
  /// if case .notADatabase(let path) = error { print("\(path) is not a store") }
  /// ```
  case notADatabase(path: String)
  /// The database was written by a newer AsyncCoreSQLite, in a format
  /// this one cannot read.
  ///
  /// ```swift
  /// if case .unsupportedFormat(_, let version) = error { print("format \(version)") }
  /// ```
  case unsupportedFormat(path: String, version: Int)
  /// The database was written with another `schemaVersion`.
  ///
  /// ```swift
  /// if case .schemaMismatch(_, let expected, let found) = error { migrate(from: found, to: expected) }
  /// ```
  case schemaMismatch(path: String, expected: Int, found: Int)
  /// The database holds other id, state or action types (their names, as
  /// `expected` and `found` spell them).
  ///
  /// ```swift
  /// if case .incompatible(_, let expected, let found) = error { print(expected, found) }
  /// ```
  case incompatible(path: String, expected: String, found: String)
  /// A row of `entity` (its id's JSON) fails its checksum, or a record is
  /// missing before `sequence`: that entity is refused, the others read.
  ///
  /// ```swift
  /// if case .damaged(let entity, let sequence) = error { quarantine(entity, at: sequence) }
  /// ```
  case damaged(entity: String, sequence: UInt64)
  /// SQLite itself found the database corrupt while reading `entity`.
  ///
  /// ```swift
  /// if case .corrupt(let entity, let message) = error { print(entity, message) }
  /// ```
  case corrupt(entity: String, message: String)
  /// Another journal of `entity` wrote first: record `sequence` is not the
  /// next one this journal may write. Nothing of this append is stored.
  ///
  /// ```swift
  /// if case .conflict(let entity, _) = error { print("\(entity) has two writers") }
  /// ```
  case conflict(entity: String, sequence: UInt64)
  /// A stored action or state of `entity` does not decode (`sequence` is
  /// the record's, or the snapshot's).
  ///
  /// ```swift
  /// if case .decodingFailed(let entity, let sequence, let description) = error { print(entity, sequence, description) }
  /// ```
  case decodingFailed(entity: String, sequence: UInt64, description: String)
  /// An action, a state or an id did not encode.
  ///
  /// ```swift
  /// if case .encodingFailed(let description) = error { print(description) }
  /// ```
  case encodingFailed(description: String)
  /// The store, or the journal, is closed.
  ///
  /// ```swift
  /// await store.close()
  /// // try await journal.append(records) now throws .closed
  /// ```
  case closed
  /// SQLite failed `operation` with result `code` (an extended result code)
  /// and `message`.
  ///
  /// ```swift
  /// if case .sqlite(let operation, let code, _) = error, code == 13 { print("disk full during \(operation)") }
  /// ```
  case sqlite(operation: String, code: Int32, message: String)
  /// A system call on `path` failed with `errno`: a missing folder gives
  /// `ENOENT`.
  ///
  /// ```swift
  /// if case .fileSystem(_, let path, let code) = error, code == ENOENT { print("no folder for \(path)") }
  /// ```
  case fileSystem(operation: String, path: String, errno: Int32)

  /// One line for a log, bounded.
  ///
  /// ```swift
  /// print(error)   // AsyncCoreSQLite: "ada" is damaged at record 7 …
  /// ```
  public var description: String {
    let text =
      switch self {
      case .notAFile(let path): "\(path) is not a regular file (a directory, FIFO, device or socket)"
      case .locked(let path): "\(path) is open in another store (its lock file is held)"
      case .readOnly(let path): "\(path) cannot be written (its permissions or a read-only file system)"
      case .notADatabase(let path): "\(path) is not a database of AsyncCoreSQLite"
      case .unsupportedFormat(let path, let version): "\(path) has format \(version), newer than this library reads"
      case .schemaMismatch(let path, let expected, let found):
        "\(path) was written with schema version \(found), not \(expected)"
      case .incompatible(let path, let expected, let found): "\(path) holds \(found), not \(expected)"
      case .damaged(let entity, let sequence):
        "entity \(entity) is damaged at record \(sequence) (a checksum failed or a record is missing)"
      case .corrupt(let entity, let message): "SQLite found the database corrupt reading entity \(entity): \(message)"
      case .conflict(let entity, let sequence):
        "entity \(entity) has another writer: record \(sequence) is not this journal's to write"
      case .decodingFailed(let entity, let sequence, let description):
        "entity \(entity), record \(sequence), does not decode: \(description)"
      case .encodingFailed(let description): "encoding failed: \(description)"
      case .closed: "the store or journal is closed"
      case .sqlite(let operation, let code, let message): "\(operation) failed (SQLite \(code)): \(message)"
      case .fileSystem(let operation, let path, let code):
        "\(operation) \(path) failed: \(systemMessage(code))"
      }
    return "AsyncCoreSQLite: " + logSafe(text, quoted: false, limit: 500)
  }
}

extension SQLiteStoreError: DiagnosticLine {
  package var diagnosticLine: String { description }
}
