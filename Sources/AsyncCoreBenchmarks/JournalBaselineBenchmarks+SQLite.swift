import CSQLite

// The journal baselines' SQLite rows (see JournalBaselineBenchmarks.swift):
// the system's libsqlite3 in WAL mode with `synchronous=FULL`, so that every
// commit is on the disk when it returns, as a durable action is.

/// Why SQLite cannot run the baseline here (it cannot open a database in
/// the temporary directory, or refuses WAL mode), or nil when it can.
func sqliteUnavailableReason() -> String? {
  let scratch = ScratchDirectory("sqlite-probe")
  defer { scratch.remove() }
  switch SQLiteTable.open(in: scratch.path) {
  case .success(let table):
    table.close()
    return nil
  case .failure(let failure): return failure.message
  }
}

/// Inserts one row per frame (cycling through `frames`), an integer primary
/// key and the frame as a blob, `rowsPerTransaction` rows to a transaction,
/// for `duration`, into a new database; nil, after a one-line message, when
/// SQLite cannot run (see ``sqliteUnavailableReason()``).
///
/// The sample counts rows, not transactions.
func sqliteCommits(_ frames: [[UInt8]], rowsPerTransaction: Int, for duration: Duration) -> Sample? {
  let scratch = ScratchDirectory("sqlite")
  defer { scratch.remove() }
  let table: SQLiteTable
  switch SQLiteTable.open(in: scratch.path) {
  case .success(let opened): table = opened
  case .failure(let failure):
    print("SQLite rows skipped: \(failure.message)")
    return nil
  }
  defer { table.close() }
  let clock = ContinuousClock()
  let start = clock.now
  let deadline = start + duration
  var rows = 0
  repeat {
    if let failure = table.commit(frames, from: rows, count: rowsPerTransaction) {
      print("SQLite rows skipped: \(failure.message)")
      return nil
    }
    rows += rowsPerTransaction
  } while clock.now < deadline
  return Sample(operations: rows, duration: clock.now - start)
}

/// The linked libsqlite3's version, "3.40.1".
func sqliteVersion() -> String {
  String(cString: sqlite3_libversion())
}

struct SQLiteFailure: Error {
  let message: String
}

/// A database of one table `records(id INTEGER PRIMARY KEY, body BLOB)`,
/// with its statements prepared once.
private struct SQLiteTable {
  let database: OpaquePointer
  let begin: OpaquePointer
  let insert: OpaquePointer
  let commit: OpaquePointer

  static func open(in directory: String) -> Result<SQLiteTable, SQLiteFailure> {
    let path = directory + "/records.sqlite"
    var handle: OpaquePointer?
    let opened = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    guard let database = handle else {
      return .failure(SQLiteFailure(message: "sqlite3_open_v2(\(path)) gave no handle: \(describe(opened))"))
    }
    func fail(_ step: String) -> Result<SQLiteTable, SQLiteFailure> {
      let message = "\(step) on \(path): \(String(cString: sqlite3_errmsg(database)))"
      sqlite3_close_v2(database)
      return .failure(SQLiteFailure(message: message))
    }
    guard opened == SQLITE_OK else { return fail("sqlite3_open_v2") }
    // `journal_mode` answers with the mode it took; a file system without
    // shared memory keeps the rollback journal, which this row must not time.
    guard let mode = singleText(database, "PRAGMA journal_mode=WAL"), mode.lowercased() == "wal" else {
      return fail("PRAGMA journal_mode=WAL")
    }
    guard sqlite3_exec(database, "PRAGMA synchronous=FULL", nil, nil, nil) == SQLITE_OK,
      sqlite3_exec(database, "CREATE TABLE records(id INTEGER PRIMARY KEY, body BLOB NOT NULL)", nil, nil, nil)
        == SQLITE_OK
    else { return fail("PRAGMA synchronous=FULL, CREATE TABLE") }
    var statements: [OpaquePointer] = []
    for sql in ["BEGIN", "INSERT INTO records(id, body) VALUES(?1, ?2)", "COMMIT"] {
      var statement: OpaquePointer?
      guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
        for prepared in statements { sqlite3_finalize(prepared) }
        return fail("sqlite3_prepare_v2(\(sql))")
      }
      statements.append(statement)
    }
    return .success(
      SQLiteTable(database: database, begin: statements[0], insert: statements[1], commit: statements[2]))
  }

  /// One transaction of `count` rows, ids from `first + 1`, bodies
  /// `frames[id % frames.count]`; the failure, if any.
  func commit(_ frames: [[UInt8]], from first: Int, count: Int) -> SQLiteFailure? {
    guard run(begin) else { return failure("BEGIN") }
    for id in first + 1...first + count {
      let frame = frames[id % frames.count]
      // A null destructor (SQLITE_STATIC): the bytes stay put until the
      // statement is reset, inside this closure.
      let inserted = frame.withUnsafeBytes { bytes in
        sqlite3_bind_int64(insert, 1, Int64(id)) == SQLITE_OK
          && sqlite3_bind_blob(insert, 2, bytes.baseAddress, Int32(bytes.count), nil) == SQLITE_OK
          && run(insert)
      }
      guard inserted else { return failure("INSERT") }
    }
    guard run(commit) else { return failure("COMMIT") }
    return nil
  }

  func close() {
    for statement in [begin, insert, commit] { sqlite3_finalize(statement) }
    sqlite3_close_v2(database)
  }

  /// Steps `statement` to its end and resets it: whether it succeeded.
  private func run(_ statement: OpaquePointer) -> Bool {
    let stepped = sqlite3_step(statement)
    sqlite3_reset(statement)
    return stepped == SQLITE_DONE
  }

  private func failure(_ step: String) -> SQLiteFailure {
    SQLiteFailure(message: "\(step): \(String(cString: sqlite3_errmsg(database)))")
  }
}

/// The first column of the first row `sql` returns, as text.
private func singleText(_ database: OpaquePointer, _ sql: String) -> String? {
  var statement: OpaquePointer?
  guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
  defer { sqlite3_finalize(statement) }
  guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return nil }
  return String(cString: text)
}

private func describe(_ code: Int32) -> String {
  String(cString: sqlite3_errstr(code))
}
