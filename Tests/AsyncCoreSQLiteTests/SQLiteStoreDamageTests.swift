import AsyncCore
import AsyncCoreJournal
import AsyncCoreSQLite
import AsyncCoreTestSupport
import Foundation
import Testing

@Suite("Damage to one entity in an entity store", .timeLimit(.minutes(5)))
struct SQLiteStoreDamageTests {
  /// The marker in record `record` of entity `entity`: unique in the file.
  static func marker(_ entity: Int, _ record: Int) -> String { "MARKER-\(entity)-\(record)-QZXJ" }

  @Test(
    "a flipped byte in one entity's record refuses that entity alone, typed and reported; the others recover exactly")
  func flippedByteInARecord() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    for entity in 0..<5 {
      let journal = try await store.journal(for: "e\(entity)")
      for record in 1...3 { try await append([.add(Self.marker(entity, record))], to: journal) }
    }
    await store.close()
    // The close checkpointed: every row is in the main file, the WAL is gone.
    #expect(!FileManager.default.fileExists(atPath: scratch.database + "-wal"))
    let bytes = try contents(of: scratch.database)
    let found = offsets(of: Array(Self.marker(2, 2).utf8), in: bytes)
    #expect(found.count == 1)
    let target = try #require(found.first)
    try flipByte(at: target + 9, in: scratch.database)

    let reports = Reports()
    let reopened = try CartStore(path: scratch.database, diagnostics: reports.handler)
    let failure = await error { try await reopened.journal(for: "e2") }
    #expect(failure as? SQLiteStoreError == .damaged(entity: "\"e2\"", sequence: 2))
    #expect(reports.errors == [.damaged(entity: "\"e2\"", sequence: 2)])
    for entity in [0, 1, 3, 4] {
      let (state, actions) = try await recovered(try await reopened.journal(for: "e\(entity)"))
      #expect(state == nil)
      #expect(actions == (1...3).map { .add(Self.marker(entity, $0)) })
    }
    // Refused again on every activation, never repaired silently.
    #expect(
      await error { try await reopened.journal(for: "e2") } as? SQLiteStoreError
        == .damaged(entity: "\"e2\"", sequence: 2))
    await reopened.close()
  }

  @Test("a flipped byte in one entity's snapshot refuses that entity alone")
  func flippedByteInASnapshot() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    for entity in 0..<3 {
      let journal = try await store.journal(for: "e\(entity)")
      try await append([.add("x")], to: journal)
      try await journal.snapshot(Cart(items: [Self.marker(entity, 0)]))
    }
    await store.close()
    let bytes = try contents(of: scratch.database)
    let found = offsets(of: Array(Self.marker(1, 0).utf8), in: bytes)
    #expect(found.count == 1)
    try flipByte(at: try #require(found.first) + 9, in: scratch.database)

    let reopened = try CartStore(path: scratch.database, diagnostics: Reports().handler)
    #expect(
      await error { try await reopened.journal(for: "e1") } as? SQLiteStoreError
        == .damaged(entity: "\"e1\"", sequence: 1))
    for entity in [0, 2] {
      let (state, actions) = try await recovered(try await reopened.journal(for: "e\(entity)"))
      #expect(state == Cart(items: [Self.marker(entity, 0)]))
      #expect(actions.isEmpty)
    }
    await reopened.close()
  }

  @Test("a record missing from the middle of an entity's history is damage at its number")
  func missingRecord() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    try await append([.add("a"), .add("b"), .add("c")], to: try await store.journal(for: "ada"))
    await store.close()
    do {
      let raw = try RawDatabase(scratch.database)
      #expect(raw.execute("DELETE FROM records WHERE seq = 2") == 0)
    }
    let reopened = try CartStore(path: scratch.database, diagnostics: Reports().handler)
    #expect(
      await error { try await reopened.journal(for: "ada") } as? SQLiteStoreError
        == .damaged(entity: "\"ada\"", sequence: 2))
    await reopened.close()
  }

  @Test("SQLite's own finding of corruption on an entity's read is a typed error naming that entity")
  func sqliteCorruption() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    try await append([.add(Self.marker(0, 1))], to: try await store.journal(for: "ada"))
    await store.close()
    let bytes = try contents(of: scratch.database)
    let marker = try #require(offsets(of: Array(Self.marker(0, 1).utf8), in: bytes).first)
    // The first byte of the b-tree page holding the record: its page type,
    // which no valid page has as 0x00.
    let page = marker / 4_096 * 4_096
    #expect(page > 0)
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: scratch.database))
    try handle.seek(toOffset: UInt64(page))
    try handle.write(contentsOf: Data([0x00]))
    try handle.close()

    let reports = Reports()
    let reopened = try CartStore(path: scratch.database, diagnostics: reports.handler)
    let failure = await error { try await reopened.journal(for: "ada") }
    guard case .corrupt(let entity, _)? = failure as? SQLiteStoreError else {
      Issue.record("expected .corrupt, got \(String(describing: failure))")
      return
    }
    #expect(entity == "\"ada\"")
    #expect(reports.errors.count == 1)
    await reopened.close()
  }
}
