import CSQLite

/// What the database holds of one entity, as read: not yet checked.
struct StoredEntity: Sendable {
  var snapshot: StoredRow?
  var records: [StoredRow] = []
}

/// The connection activations read on, with its statements prepared once.
/// Used under the store's lock, on the caller's thread: in WAL mode a
/// reader never waits for the writer.
final class StoreReader {
  private let connection: SQLiteConnection
  private let begin, end, snapshot, records: SQLiteStatement

  init(path: String, named name: String) throws(SQLiteStoreError) {
    connection = try SQLiteConnection.open(path, named: name, create: false)
    var prepared: [SQLiteStatement] = []
    do {
      try connection.execute("PRAGMA query_only = 1")
      for sql in ["BEGIN", "COMMIT", StoreSchema.readSnapshot, StoreSchema.readRecords] {
        prepared.append(try connection.prepare(sql))
      }
    } catch {
      for statement in prepared { statement.finalize() }
      connection.close()
      throw error
    }
    (begin, end, snapshot, records) = (prepared[0], prepared[1], prepared[2], prepared[3])
  }

  /// The entity's snapshot and the records after it, in one read
  /// transaction (so a snapshot committed meanwhile cannot split them).
  func read(_ entity: EntityKey) -> Result<StoredEntity, SQLiteStoreError> {
    var code = begin.step()
    begin.reset()
    guard code == SQLITE_DONE else { return .failure(failure("BEGIN", entity, code)) }
    defer {
      if connection.inTransaction {
        _ = end.step()
        end.reset()
      }
    }
    var found = StoredEntity()
    snapshot.bind(1, entity.bytes)
    code = snapshot.step()
    if code == SQLITE_ROW {
      found.snapshot = StoredRow(
        sequence: UInt64(snapshot.int64(0)), body: snapshot.blob(1), crc: snapshot.int64(2))
      code = snapshot.step()
    }
    snapshot.reset()
    guard code == SQLITE_DONE else { return .failure(failure("SELECT FROM snapshots", entity, code)) }
    records.bind(1, entity.bytes)
    records.bind(2, Int64(found.snapshot?.sequence ?? 0))
    defer { records.reset() }
    while true {
      code = records.step()
      guard code == SQLITE_ROW else { break }
      found.records.append(
        StoredRow(sequence: UInt64(records.int64(0)), body: records.blob(1), crc: records.int64(2)))
    }
    guard code == SQLITE_DONE else { return .failure(failure("SELECT FROM records", entity, code)) }
    return .success(found)
  }

  /// SQLite's own finding of corruption is the entity's error; anything
  /// else is the operation's.
  private func failure(_ operation: String, _ entity: EntityKey, _ code: Int32) -> SQLiteStoreError {
    if code & 0xFF == SQLITE_CORRUPT {
      return .corrupt(entity: entity.name, message: String(cString: sqlite3_errmsg(connection.handle)))
    }
    return connection.error(operation, code: code)
  }

  func close() {
    for statement in [begin, end, snapshot, records] { statement.finalize() }
    connection.close()
  }
}
