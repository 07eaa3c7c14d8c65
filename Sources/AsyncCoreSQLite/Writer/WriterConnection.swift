import CSQLite

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The writer thread's connection and statements: one transaction per
/// batch of requests. Used by that thread alone.
final class WriterConnection {
  private let connection: SQLiteConnection
  /// The `-wal` file beside the database, which ``sync`` forces to the disk.
  private let walPath: String
  /// Under `synchronous=FULL` every commit is already synced.
  private let syncsEachCommit: Bool
  /// The store's lock file, held until the database is closed.
  private let lockDescriptor: Int32
  private let begin, commit, rollback, head, insert, upsert, deleteCovered: SQLiteStatement

  init(connection: SQLiteConnection, syncsEachCommit: Bool, lockDescriptor: Int32) throws(SQLiteStoreError) {
    self.connection = connection
    self.walPath = connection.path + "-wal"
    self.syncsEachCommit = syncsEachCommit
    self.lockDescriptor = lockDescriptor
    var prepared: [SQLiteStatement] = []
    do {
      for sql in [
        "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK", StoreSchema.head, StoreSchema.insertRecord,
        StoreSchema.upsertSnapshot, StoreSchema.deleteCovered,
      ] {
        prepared.append(try connection.prepare(sql))
      }
    } catch {
      for statement in prepared { statement.finalize() }
      throw error
    }
    (begin, commit, rollback, head, insert, upsert, deleteCovered) = (
      prepared[0], prepared[1], prepared[2], prepared[3], prepared[4], prepared[5], prepared[6]
    )
  }

  /// What a batch came to: each request's outcome, in order; the records
  /// committed; whether a transaction committed.
  struct BatchResult {
    var outcomes: [Result<Void, SQLiteStoreError>]
    var rows = 0
    var committed = false
  }

  /// Why a transaction stopped: one request's fault (the others are tried
  /// again without it), or everyone's.
  private enum Abort: Error {
    case request(Int, SQLiteStoreError)
    case all(SQLiteStoreError)
  }

  /// Commits every append and snapshot of `requests` in one transaction,
  /// then syncs if one asked. A request another writer got ahead of fails
  /// alone with ``SQLiteStoreError/conflict(entity:sequence:)``.
  func commit(_ requests: [WriteRequest]) -> BatchResult {
    var result = BatchResult(outcomes: Array(repeating: .success(()), count: requests.count))
    var writes: [Int] = []
    for (index, request) in requests.enumerated() {
      switch request {
      case .append, .snapshot: writes.append(index)
      case .sync: break
      case .hold(let body): body()
      }
    }
    var excluded: Set<Int> = []
    while !writes.isEmpty {
      for index in writes where !excluded.contains(index) { result.outcomes[index] = .success(()) }
      do throws(Abort) {
        result.rows = try transaction(requests, writes.filter { !excluded.contains($0) }, &result.outcomes)
        result.committed = true
        break
      } catch {
        rollBack()
        switch error {
        case .request(let index, let failure):
          excluded.insert(index)
          result.outcomes[index] = .failure(failure)
        case .all(let failure):
          for index in writes where !excluded.contains(index) { result.outcomes[index] = .failure(failure) }
          return syncing(requests, result)
        }
      }
    }
    return syncing(requests, result)
  }

  /// `result`, after the sync that a request of the batch asked for.
  private func syncing(_ requests: [WriteRequest], _ result: BatchResult) -> BatchResult {
    var result = result
    let syncs = requests.indices.filter { if case .sync = requests[$0] { true } else { false } }
    if !syncs.isEmpty, !syncsEachCommit, let error = syncWAL() {
      for index in syncs { result.outcomes[index] = .failure(error) }
    }
    return result
  }

  /// One transaction of the requests at `indices`; the records inserted.
  private func transaction(
    _ requests: [WriteRequest], _ indices: [Int], _ outcomes: inout [Result<Void, SQLiteStoreError>]
  ) throws(Abort) -> Int {
    try run(begin, "BEGIN IMMEDIATE")
    var rows = 0
    for index in indices {
      switch requests[index] {
      case .append(let entity, let first, let records):
        let last = try headSequence(of: entity)
        guard last == first - 1 else {
          // Nothing of it was written: the transaction goes on without it.
          outcomes[index] = .failure(.conflict(entity: entity.name, sequence: min(first, last + 1)))
          continue
        }
        for record in records {
          insert.bind(1, entity.bytes)
          insert.bind(2, Int64(record.sequence))
          insert.bind(3, record.body)
          insert.bind(4, record.crc)
          let code = insert.step()
          insert.reset()
          guard code == SQLITE_DONE else {
            // INSERT, never OR REPLACE: a number already taken is another writer's.
            if code & 0xFF == SQLITE_CONSTRAINT {
              throw .request(index, .conflict(entity: entity.name, sequence: record.sequence))
            }
            throw .all(connection.error("INSERT INTO records", code: code))
          }
        }
        rows += records.count
      case .snapshot(let entity, let row):
        guard try headSequence(of: entity) == row.sequence else {
          outcomes[index] = .failure(.conflict(entity: entity.name, sequence: row.sequence))
          continue
        }
        upsert.bind(1, entity.bytes)
        upsert.bind(2, Int64(row.sequence))
        upsert.bind(3, row.body)
        upsert.bind(4, row.crc)
        try run(upsert, "INSERT INTO snapshots")
        deleteCovered.bind(1, entity.bytes)
        deleteCovered.bind(2, Int64(row.sequence))
        try run(deleteCovered, "DELETE FROM records")
      case .sync, .hold:
        continue
      }
    }
    try run(commit, "COMMIT")
    return rows
  }

  /// The entity's last stored sequence number: its last record's, or its
  /// snapshot's, or 0.
  private func headSequence(of entity: EntityKey) throws(Abort) -> UInt64 {
    head.bind(1, entity.bytes)
    defer { head.reset() }
    let code = head.step()
    guard code == SQLITE_ROW else { throw .all(connection.error("SELECT the last sequence", code: code)) }
    return UInt64(head.int64(0))
  }

  private func run(_ statement: SQLiteStatement, _ operation: String) throws(Abort) {
    let code = statement.step()
    statement.reset()
    guard code == SQLITE_DONE else { throw .all(connection.error(operation, code: code)) }
  }

  private func rollBack() {
    guard connection.inTransaction else { return }  // some errors roll back by themselves
    _ = rollback.step()
    rollback.reset()
  }

  /// `fdatasync` of the `-wal` file: every committed transaction is a frame
  /// in it, or was copied into the database file by a checkpoint, which
  /// under `synchronous=NORMAL` syncs both files. `nil`, or the error.
  private func syncWAL() -> SQLiteStoreError? {
    let descriptor = Self.retryingInterrupts { open(walPath, O_RDONLY | O_CLOEXEC) }
    guard descriptor >= 0 else {
      // No WAL file: nothing committed since the last full checkpoint.
      return errno == ENOENT ? nil : .fileSystem(operation: "open", path: walPath, errno: errno)
    }
    defer { closeDescriptor(descriptor) }
    #if canImport(Darwin)
      let synced = Self.retryingInterrupts { fsync(descriptor) }
    #else
      let synced = Self.retryingInterrupts { fdatasync(descriptor) }
    #endif
    return synced == 0 ? nil : .fileSystem(operation: "fdatasync", path: walPath, errno: errno)
  }

  /// Copies the WAL into the database file and syncs it (a checkpoint,
  /// which leaves the rows in the main file), then closes the database and
  /// releases the lock.
  func close() {
    for statement in [begin, commit, rollback, head, insert, upsert, deleteCovered] { statement.finalize() }
    // The last connection's close checkpoints too; asking first makes it
    // certain while the reader may still be closing.
    try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    releaseLock(lockDescriptor)
  }

  static func retryingInterrupts(_ call: () -> Int32) -> Int32 {
    while true {
      let result = call()
      if result < 0, errno == EINTR { continue }
      return result
    }
  }
}

/// `close(2)`, which the methods named `close` shadow.
func closeDescriptor(_ descriptor: Int32) {
  _ = close(descriptor)
}

/// Lets the store's `flock` go, then closes its descriptor. The unlock comes
/// first: a child process spawned meanwhile shares the descriptor's lock
/// until it execs, and a close alone would leave the lock held for it.
func releaseLock(_ descriptor: Int32) {
  _ = flock(descriptor, LOCK_UN)
  _ = close(descriptor)
}
