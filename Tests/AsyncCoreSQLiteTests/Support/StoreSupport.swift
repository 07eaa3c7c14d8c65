import AsyncCore
import AsyncCoreJournal
import AsyncCoreSQLite
import AsyncCoreTestSupport
import CSQLite
import Foundation
import Synchronization

typealias CartStore = SQLiteEntityStore<String, Cart, CartAction>

/// A fresh folder under the system's temporary one, removed at ``remove()``.
struct Scratch {
  let path: String

  init() throws {
    var template = Array((NSTemporaryDirectory() + "/sqlite-store-test-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
    path = String(cString: made)
  }

  /// The database inside.
  var database: String { path + "/entities.sqlite" }

  func remove() {
    try? FileManager.default.removeItem(atPath: path)
  }
}

/// Collects what a store reports to its diagnostics handler.
final class Reports: Sendable {
  let failures = Locked<[EffectFailure]>([])
  var handler: @Sendable (EffectFailure) -> Void { { failure in self.failures.withLock { $0.append(failure) } } }
  var errors: [SQLiteStoreError] { failures.withLock { $0.compactMap { $0.error as? SQLiteStoreError } } }
}

/// What `journal` recovers, as a core would reduce it: the state and the actions.
func recovered(_ journal: any CoreJournal<Cart, CartAction>) async throws -> (Cart?, [CartAction]) {
  let state = try await journal.recoverState()
  var actions: [CartAction] = []
  while let batch = try await journal.recoverActions() { actions += batch }
  return (state, actions)
}

/// Appends `actions` to `journal`, one record each, in one append.
@discardableResult
func append(_ actions: [CartAction], to journal: any CoreJournal<Cart, CartAction>) async throws -> Bool {
  try await journal.append(actions.map { try journal.encode($0) })
}

/// The error `body` throws, or nil.
func error<T>(_ body: () async throws -> T) async -> (any Error)? {
  do {
    _ = try await body()
    return nil
  } catch {
    return error
  }
}

/// Runs SQL on a database with a connection of the test's own.
struct RawDatabase: ~Copyable {
  let handle: OpaquePointer

  init(_ path: String) throws {
    var handle: OpaquePointer?
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK,
      let handle
    else { throw POSIXError(.EIO) }
    self.handle = handle
  }

  deinit { sqlite3_close_v2(handle) }

  /// Every row of `sql`, each column as text (NULL as "").
  func rows(_ sql: String) -> [[String]] {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return [] }
    defer { sqlite3_finalize(statement) }
    var rows: [[String]] = []
    while sqlite3_step(statement) == SQLITE_ROW {
      rows.append(
        (0..<sqlite3_column_count(statement)).map { column in
          sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
        })
    }
    return rows
  }

  func integer(_ sql: String) -> Int {
    Int(rows(sql).first?.first ?? "") ?? -1
  }

  func execute(_ sql: String) -> Int32 {
    sqlite3_exec(handle, sql, nil, nil, nil)
  }
}

/// The bytes of the file at `path`.
func contents(of path: String) throws -> [UInt8] {
  Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Where `needle` starts in `haystack`, every time.
func offsets(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
  guard needle.count <= haystack.count else { return [] }
  return (0...(haystack.count - needle.count)).filter { start in
    haystack[start] == needle[0] && Array(haystack[start..<start + needle.count]) == needle
  }
}

/// Replaces the byte at `offset` of the file at `path` with its complement.
func flipByte(at offset: Int, in path: String) throws {
  let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
  defer { try? handle.close() }
  try handle.seek(toOffset: UInt64(offset))
  let byte = try handle.read(upToCount: 1) ?? Data()
  try handle.seek(toOffset: UInt64(offset))
  try handle.write(contentsOf: Data([~(byte.first ?? 0)]))
}
