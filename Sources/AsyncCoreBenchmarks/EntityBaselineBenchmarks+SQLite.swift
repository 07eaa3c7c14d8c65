import AsyncCoreJournal
import AsyncCoreSQLite
import CSQLite

// The entities family's SQLite baselines (see EntityBenchmarks.swift), on
// the system's libsqlite3 through its C API, with statements prepared once:
//
// - `insertLikeTheStore`: the rows a `SQLiteEntityStore` wrote for the
//   durable throughput row (each id's record and, as the registry
//   passivated it, its snapshot, which replaces the record), in as many
//   transactions as the store committed, on one connection in WAL mode
//   with `synchronous=OFF`, into the store's own tables;
// - `EntityRowReader`: one entity's snapshot row and the records after
//   it, read from the store's database in one read transaction, for the
//   activation row to decode.

/// What a durable throughput round wrote, from the store's counters and
/// the registry's: the baseline inserts as much, as often.
struct EntityStoreWrites: Sendable {
  /// Records committed (one per id).
  let records: Int
  /// Snapshots (one per passivation).
  let snapshots: Int
  /// Transactions the store's writer committed.
  let commits: Int
  /// The registry's active limit: a snapshot follows its record by as many.
  let maxActive: Int

  /// Records and snapshots per transaction.
  var rowsPerCommit: Double { Double(records + snapshots) / Double(max(commits, 1)) }
}

/// Inserts what `writes` counts into a new database in `directory`: for
/// id 0, 1, … its record (sequence 1, `recordBody`), and once `maxActive`
/// more ids have had theirs, the id's snapshot (`snapshotBody`, an upsert,
/// then the delete of the record it covers, as the store does); the
/// snapshots left at the end after the last record. Rows are spread evenly
/// over `writes.commits` transactions. Every row's key is the id's JSON
/// (its decimal digits) and its checksum the store's (CRC-32C of the key,
/// the sequence and the body). Operations are records: entities.
func insertLikeTheStore(
  _ writes: EntityStoreWrites, recordBody: [UInt8], snapshotBody: [UInt8], in directory: String
) -> Sample {
  let path = directory + "/alone.sqlite"
  var handle: OpaquePointer?
  guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK,
    let database = handle
  else { fatalError("AsyncCoreBenchmarks: sqlite3_open_v2(\(path)) failed") }
  defer { sqlite3_close_v2(database) }
  execute(database, "PRAGMA journal_mode=WAL")
  execute(database, "PRAGMA synchronous=OFF")
  // The store's own tables, so the baseline's B-trees are the store's.
  execute(database, StoreSchema.create)
  let statements = EntityStatements(
    database,
    [
      "BEGIN IMMEDIATE", "COMMIT", "INSERT INTO records(entity, seq, body, crc) VALUES(?1, ?2, ?3, ?4)",
      """
      INSERT INTO snapshots(entity, seq, body, crc) VALUES(?1, ?2, ?3, ?4)
      ON CONFLICT(entity) DO UPDATE SET seq = excluded.seq, body = excluded.body, crc = excluded.crc
      """,
      "DELETE FROM records WHERE entity = ?1 AND seq <= ?2",
    ])
  defer { statements.finalize() }
  let (begin, commit, insert, upsert, delete) = (
    statements[0], statements[1], statements[2], statements[3], statements[4]
  )
  var key = EntityKeyBuffer()
  let total = writes.records + writes.snapshots
  let perCommit = Double(total) / Double(max(writes.commits, 1))
  var written = 0
  var committed = 0
  var snapshotted = 0

  func row(_ statement: OpaquePointer, _ id: Int, _ body: [UInt8]) {
    key.set(id)
    let crc = key.checksum(sequence: 1, body: body)
    key.bytes.withUnsafeBytes { keyBytes in
      body.withUnsafeBytes { bodyBytes in
        // A null destructor (SQLITE_STATIC): the bytes stay put until the
        // statement is reset, inside these closures.
        sqlite3_bind_blob(statement, 1, keyBytes.baseAddress, Int32(key.count), nil)
        sqlite3_bind_int64(statement, 2, 1)
        sqlite3_bind_blob(statement, 3, bodyBytes.baseAddress, Int32(bodyBytes.count), nil)
        sqlite3_bind_int64(statement, 4, crc)
        step(database, statement)
      }
    }
  }
  func snapshot(_ id: Int) {
    row(upsert, id, snapshotBody)
    key.bytes.withUnsafeBytes { keyBytes in
      sqlite3_bind_blob(delete, 1, keyBytes.baseAddress, Int32(key.count), nil)
      sqlite3_bind_int64(delete, 2, 1)
      step(database, delete)
    }
    snapshotted += 1
  }
  func counted() {
    written += 1
    if Double(written) >= Double(committed + 1) * perCommit {
      step(database, commit)
      committed += 1
      if written < total { step(database, begin) }
    }
  }

  let clock = ContinuousClock()
  let start = clock.now
  step(database, begin)
  for id in 0..<writes.records {
    row(insert, id, recordBody)
    counted()
    if id >= writes.maxActive && snapshotted < writes.snapshots {
      snapshot(snapshotted)
      counted()
    }
  }
  while snapshotted < writes.snapshots {
    snapshot(snapshotted)
    counted()
  }
  if sqlite3_get_autocommit(database) == 0 { step(database, commit) }
  return Sample(operations: writes.records, duration: clock.now - start)
}

/// One entity's rows, read from a store's database with the store's
/// queries on a connection of its own.
final class EntityRowReader {
  private let database: OpaquePointer
  private let statements: EntityStatements
  private var key = EntityKeyBuffer()

  init(path: String) {
    var handle: OpaquePointer?
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let database = handle else {
      fatalError("AsyncCoreBenchmarks: sqlite3_open_v2(\(path), ) failed")
    }
    self.database = database
    statements = EntityStatements(
      database,
      [
        "BEGIN", "COMMIT", "SELECT seq, body, crc FROM snapshots WHERE entity = ?1",
        "SELECT seq, body, crc FROM records WHERE entity = ?1 AND seq > ?2 ORDER BY seq",
      ])
  }

  /// Entity `id`'s snapshot body (nil if it has none) and the bodies of
  /// the records after it, in one read transaction.
  func read(_ id: Int) -> (snapshot: [UInt8]?, records: [[UInt8]]) {
    let (begin, end, snapshot, records) = (statements[0], statements[1], statements[2], statements[3])
    key.set(id)
    step(database, begin)
    var found: [UInt8]?
    var sequence: Int64 = 0
    key.bytes.withUnsafeBytes { keyBytes in
      sqlite3_bind_blob(snapshot, 1, keyBytes.baseAddress, Int32(key.count), nil)
      if sqlite3_step(snapshot) == SQLITE_ROW {
        sequence = sqlite3_column_int64(snapshot, 0)
        found = blob(snapshot, 1)
      }
      sqlite3_reset(snapshot)
    }
    var bodies: [[UInt8]] = []
    key.bytes.withUnsafeBytes { keyBytes in
      sqlite3_bind_blob(records, 1, keyBytes.baseAddress, Int32(key.count), nil)
      sqlite3_bind_int64(records, 2, sequence)
      while sqlite3_step(records) == SQLITE_ROW { bodies.append(blob(records, 1)) }
      sqlite3_reset(records)
    }
    step(database, end)
    return (found, bodies)
  }

  func close() {
    statements.finalize()
    sqlite3_close_v2(database)
  }
}

// MARK: - Helpers

/// Statements prepared once on one connection, by index.
private struct EntityStatements {
  private let statements: [OpaquePointer]

  init(_ database: OpaquePointer, _ sql: [String]) {
    statements = sql.map { text in
      var statement: OpaquePointer?
      guard sqlite3_prepare_v2(database, text, -1, &statement, nil) == SQLITE_OK, let statement else {
        fatalError("AsyncCoreBenchmarks: sqlite3_prepare_v2(\(text)): \(String(cString: sqlite3_errmsg(database)))")
      }
      return statement
    }
  }

  subscript(index: Int) -> OpaquePointer { statements[index] }

  func finalize() {
    for statement in statements { sqlite3_finalize(statement) }
  }
}

/// An entity key as the store writes an `Int` id's: its JSON, the decimal
/// digits. One buffer, rewritten for each row.
private struct EntityKeyBuffer {
  var bytes = [UInt8](repeating: 0, count: 24)
  var count = 0
  private var scratch: [UInt8] = []

  mutating func set(_ id: Int) {
    var value = id
    var digits = 0
    repeat {
      bytes[digits] = UInt8(ascii: "0") + UInt8(value % 10)
      value /= 10
      digits += 1
    } while value > 0
    bytes[0..<digits].reverse()
    if id < 0 { fatalError("AsyncCoreBenchmarks: negative entity id \(id)") }
    count = digits
  }

  /// The store's row checksum: CRC-32C of the key, the sequence
  /// (little-endian) and the body.
  mutating func checksum(sequence: UInt64, body: [UInt8]) -> Int64 {
    scratch.removeAll(keepingCapacity: true)
    scratch += bytes[0..<count]
    withUnsafeBytes(of: sequence.littleEndian) { scratch += $0 }
    scratch += body
    return Int64(CRC32C.checksum(scratch))
  }
}

private func execute(_ database: OpaquePointer, _ sql: String) {
  guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else {
    fatalError("AsyncCoreBenchmarks: \(sql): \(String(cString: sqlite3_errmsg(database)))")
  }
}

/// Steps `statement` to its end and resets it, or ends the run.
private func step(_ database: OpaquePointer, _ statement: OpaquePointer) {
  let code = sqlite3_step(statement)
  sqlite3_reset(statement)
  guard code == SQLITE_DONE else {
    fatalError("AsyncCoreBenchmarks: sqlite3_step: \(String(cString: sqlite3_errmsg(database)))")
  }
}

private func blob(_ statement: OpaquePointer, _ column: Int32) -> [UInt8] {
  // The pointer first, then its size, as SQLite's documentation orders them.
  let base = sqlite3_column_blob(statement, column)
  let count = Int(sqlite3_column_bytes(statement, column))
  guard count > 0, let base else { return [] }
  return Array(UnsafeRawBufferPointer(start: base, count: count))
}
