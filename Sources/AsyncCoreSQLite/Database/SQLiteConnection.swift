import CSQLite

/// One SQLite connection, used by one thread at a time: the writer's
/// thread, or the reader's lock holder. Opened without SQLite's own mutex
/// (`SQLITE_OPEN_NOMUTEX`), since the store serializes every use itself.
final class SQLiteConnection {
  let handle: OpaquePointer
  /// The database file, as opened (resolved).
  let path: String
  /// The path as the user gave it: what errors name.
  let name: String

  private init(handle: OpaquePointer, path: String, name: String) {
    self.handle = handle
    self.path = path
    self.name = name
  }

  /// Opens `path` (never following a symbolic link: the store resolved
  /// it), which the user calls `name`.
  static func open(_ path: String, named name: String, create: Bool) throws(SQLiteStoreError) -> SQLiteConnection {
    var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
    if create { flags |= SQLITE_OPEN_CREATE }
    var handle: OpaquePointer?
    let opened = sqlite3_open_v2(path, &handle, flags, nil)
    guard let handle else {
      throw .sqlite(
        operation: "sqlite3_open_v2 \(name)", code: opened, message: String(cString: sqlite3_errstr(opened)))
    }
    let connection = SQLiteConnection(handle: handle, path: path, name: name)
    guard opened == SQLITE_OK else {
      let error = connection.error("sqlite3_open_v2 \(name)", code: opened)
      connection.close()
      throw error
    }
    sqlite3_extended_result_codes(handle, 1)
    // Waits out another process's brief lock (a reader running a checkpoint,
    // the sqlite3 shell) instead of failing at once; bounded, never a hang.
    sqlite3_busy_timeout(handle, 5_000)
    return connection
  }

  /// Runs `sql` (statements without results) to its end.
  func execute(_ sql: String) throws(SQLiteStoreError) {
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    guard code == SQLITE_OK else { throw error(sql, code: code) }
  }

  /// The first column of the first row of `sql`, as text; `nil` for no row.
  func text(_ sql: String) throws(SQLiteStoreError) -> String? {
    let statement = try prepare(sql)
    defer { statement.finalize() }
    let code = statement.step()
    if code == SQLITE_DONE { return nil }
    guard code == SQLITE_ROW else { throw error(sql, code: code) }
    return statement.text(0)
  }

  /// The first column of the first row of `sql`, as an integer.
  func integer(_ sql: String) throws(SQLiteStoreError) -> Int64 {
    let statement = try prepare(sql)
    defer { statement.finalize() }
    let code = statement.step()
    guard code == SQLITE_ROW else { throw error(sql, code: code) }
    return statement.int64(0)
  }

  func prepare(_ sql: String) throws(SQLiteStoreError) -> SQLiteStatement {
    var statement: OpaquePointer?
    let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
    guard code == SQLITE_OK, let statement else { throw error("prepare \(sql)", code: code) }
    return SQLiteStatement(handle: statement, sql: sql)
  }

  /// Whether a transaction is open (`BEGIN` without its `COMMIT` yet).
  var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

  /// The error of `operation`, which returned `code`. A file that is not
  /// a database is told apart: it is the user's file, not a failure.
  func error(_ operation: String, code: Int32) -> SQLiteStoreError {
    if code & 0xFF == SQLITE_NOTADB { return .notADatabase(path: name) }
    return .sqlite(operation: operation, code: code, message: String(cString: sqlite3_errmsg(handle)))
  }

  /// Closes the connection (a statement still open keeps it alive until
  /// finalized: `sqlite3_close_v2`).
  func close() {
    sqlite3_close_v2(handle)
  }
}

/// A prepared statement, reused: bound, stepped, reset.
final class SQLiteStatement {
  let handle: OpaquePointer
  let sql: String

  init(handle: OpaquePointer, sql: String) {
    self.handle = handle
    self.sql = sql
  }

  func bind(_ index: Int32, _ value: Int64) {
    sqlite3_bind_int64(handle, index, value)
  }

  /// Binds a copy of `bytes` (`SQLITE_TRANSIENT`), so the array need not
  /// outlive the call.
  func bind(_ index: Int32, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { buffer in
      // A zero-length blob still needs a non-null pointer, or SQLite binds NULL.
      let base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
      _ = sqlite3_bind_blob(handle, index, base, Int32(buffer.count), SQLiteStatement.transient)
    }
  }

  func step() -> Int32 {
    sqlite3_step(handle)
  }

  /// Resets the statement for its next use, and drops its bound values.
  func reset() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }

  func int64(_ column: Int32) -> Int64 {
    sqlite3_column_int64(handle, column)
  }

  func blob(_ column: Int32) -> [UInt8] {
    let count = Int(sqlite3_column_bytes(handle, column))
    guard count > 0, let base = sqlite3_column_blob(handle, column) else { return [] }
    return [UInt8](UnsafeRawBufferPointer(start: base, count: count))
  }

  func text(_ column: Int32) -> String? {
    guard let text = sqlite3_column_text(handle, column) else { return nil }
    return String(cString: text)
  }

  func finalize() {
    sqlite3_finalize(handle)
  }

  /// `SQLITE_TRANSIENT`, a macro Swift does not import: SQLite copies the value.
  static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
