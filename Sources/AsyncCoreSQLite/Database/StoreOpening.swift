import AsyncCoreJournal
import CSQLite

/// Opening the database: tell a new file, a store's and anything else
/// apart before changing a byte, then set WAL mode and the sync level.
enum StoreOpening {
  /// Checks (or, for a new database, writes) what the database is, then
  /// configures the writer's connection.
  static func prepare(
    _ connection: SQLiteConnection, path: String, identity: JournalIdentity, idType: String,
    durability: JournalDurability
  ) throws(SQLiteStoreError) {
    // Reads only: a file that is not SQLite fails here (SQLITE_NOTADB), and
    // another program's database is refused before anything is written.
    let application = try connection.integer("PRAGMA application_id")
    let objects = try connection.integer("SELECT count(*) FROM sqlite_master")
    let expected = StoreSchema.meta(identity: identity, idType: idType)
    if application == 0 && objects == 0 {
      try create(connection, meta: expected)
    } else if application == StoreSchema.applicationID {
      try check(connection, path: path, expected: expected, schemaVersion: identity.schemaVersion)
    } else {
      throw .notADatabase(path: path)
    }
    // Persistent in the file; answers the mode it took.
    guard try connection.text("PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
      throw .sqlite(operation: "PRAGMA journal_mode = WAL", code: 0, message: "the database kept another journal mode")
    }
    // Per connection: FULL syncs the WAL at each commit; NORMAL only at
    // checkpoints, and at the store's sync() (see the Storage article).
    try connection.execute("PRAGMA synchronous = \(durability == .everyAction ? "FULL" : "NORMAL")")
  }

  private static func create(_ connection: SQLiteConnection, meta: [(key: String, value: String)])
    throws(SQLiteStoreError)
  {
    var sql = "BEGIN IMMEDIATE;" + StoreSchema.create
    for (key, value) in meta { sql += "INSERT INTO meta(key, value) VALUES(\(quoted(key)), \(quoted(value)));" }
    sql += "PRAGMA application_id = \(StoreSchema.applicationID); COMMIT;"
    do {
      try connection.execute(sql)
    } catch {
      if connection.inTransaction { try? connection.execute("ROLLBACK") }
      throw error
    }
  }

  private static func check(
    _ connection: SQLiteConnection, path: String, expected: [(key: String, value: String)], schemaVersion: Int
  ) throws(SQLiteStoreError) {
    let statement = try connection.prepare("SELECT key, value FROM meta")
    defer { statement.finalize() }
    var found: [String: String] = [:]
    while statement.step() == SQLITE_ROW {
      if let key = statement.text(0) { found[key] = statement.text(1) ?? "" }
    }
    guard let format = found["format"].flatMap({ Int($0) }) else { throw .notADatabase(path: path) }
    guard format <= StoreSchema.format else { throw .unsupportedFormat(path: path, version: format) }
    let version = found["schemaVersion"].flatMap { Int($0) } ?? -1
    guard version == schemaVersion else {
      throw .schemaMismatch(path: path, expected: schemaVersion, found: version)
    }
    let types = ["idType", "stateType", "actionType"]
    let want = types.map { key in expected.first { $0.key == key }?.value ?? "" }
    let have = types.map { found[$0] ?? "?" }
    guard want == have else {
      throw .incompatible(path: path, expected: describe(want), found: describe(have))
    }
  }

  private static func describe(_ types: [String]) -> String {
    "ids \(types[0]), states \(types[1]), actions \(types[2])"
  }

  /// `text` as an SQL string literal.
  private static func quoted(_ text: String) -> String {
    "'" + text.replacing("'", with: "''") + "'"
  }

  /// The settings SQLite reports on `connection`.
  static func settings(of connection: SQLiteConnection) throws(SQLiteStoreError) -> SQLiteSettings {
    SQLiteSettings(
      journalMode: try connection.text("PRAGMA journal_mode") ?? "",
      synchronous: Int(try connection.integer("PRAGMA synchronous")))
  }
}
