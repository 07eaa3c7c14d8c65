import AsyncCore
import AsyncCoreJournal
import AsyncCoreSQLite
import AsyncCoreTestSupport
import Foundation
import Synchronization
import Testing

@Suite("An entity store on one SQLite database", .timeLimit(.minutes(5)))
struct SQLiteEntityStoreTests {
  @Test("a durable core on a store's journal recovers its state after the store is closed and reopened")
  func coreRoundTrip() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    let core = try await Core(
      initialState: Cart(), journal: try await store.journal(for: "ada"), reducer: cartReducer)
    for item in ["tea", "jam", "bread"] { try await core.dispatch(.add(item)) }
    await core.shutdown()
    await store.close()

    let reopened = try CartStore(path: scratch.database)
    let again = try await Core(
      initialState: Cart(), journal: try await reopened.journal(for: "ada"), reducer: cartReducer)
    #expect(await again.state == Cart(items: ["tea", "jam", "bread"]))
    try await again.dispatch(.add("milk"))
    await again.shutdown()
    // Another entity of the same store starts from nothing.
    let other = try await recovered(try await reopened.journal(for: "bob"))
    #expect(other.0 == nil && other.1.isEmpty)
    await reopened.close()

    let third = try CartStore(path: scratch.database)
    let (state, actions) = try await recovered(try await third.journal(for: "ada"))
    #expect(state == nil)
    #expect(actions == [.add("tea"), .add("jam"), .add("bread"), .add("milk")])
    await third.close()
  }

  @Test("recovery reads the snapshot and only the records after it, in order")
  func snapshotAndTail() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database, snapshotEvery: 3)
    let journal = try await store.journal(for: "ada")
    #expect(try await append([.add("a"), .add("b")], to: journal) == false)
    #expect(try await append([.add("c")], to: journal) == true)  // 3 since the last snapshot: one is due
    try await journal.snapshot(Cart(items: ["a", "b", "c"]))
    #expect(try await append([.add("d"), .add("e")], to: journal) == false)
    await journal.close()

    let (state, actions) = try await recovered(try await store.journal(for: "ada"))
    #expect(state == Cart(items: ["a", "b", "c"]))
    #expect(actions == [.add("d"), .add("e")])
    // The records recovered count toward the next snapshot.
    let again = try await store.journal(for: "ada")
    _ = try await recovered(again)
    #expect(try await append([.add("f")], to: again) == true)
    await store.close()
  }

  @Test("a snapshot deletes the records it covers, and only that entity's")
  func compaction() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    let ada = try await store.journal(for: "ada")
    let bob = try await store.journal(for: "bob")
    try await append((0..<10).map { .add("a\($0)") }, to: ada)
    try await append((0..<4).map { .add("b\($0)") }, to: bob)
    try await ada.snapshot(Cart(items: (0..<10).map { "a\($0)" }))
    try await append([.add("a10")], to: ada)
    await store.close()

    let raw = try RawDatabase(scratch.database)
    #expect(
      raw.rows("SELECT CAST(entity AS TEXT), seq FROM records ORDER BY 1, 2") == [
        ["\"ada\"", "11"], ["\"bob\"", "1"], ["\"bob\"", "2"], ["\"bob\"", "3"], ["\"bob\"", "4"],
      ])
    #expect(raw.rows("SELECT CAST(entity AS TEXT), seq FROM snapshots") == [["\"ada\"", "10"]])
  }

  @Test("concurrent entities' appends share one commit")
  func groupCommit() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    let entities = 16
    var journals: [any CoreJournal<Cart, CartAction>] = []
    for entity in 0..<entities { journals.append(try await store.journal(for: "e\(entity)")) }
    let commitsBefore = store.commitCount

    // The writer is held inside a batch of its own while every entity
    // appends, so that their appends wait together for the next one.
    let gate = DispatchSemaphore(value: 0)
    let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
    let hold = Task {
      await store.holdWriter {
        enteredContinuation.yield()
        gate.wait()
      }
    }
    for await _ in entered { break }
    let appends = Task { [journals] in
      try await withThrowingTaskGroup(of: Void.self) { group in
        for (index, journal) in journals.enumerated() {
          group.addTask { try await append([.add("item \(index)")], to: journal) }
        }
        try await group.waitForAll()
      }
    }
    while store.waitingRequests < entities { await Task.yield() }
    gate.signal()
    await hold.value
    try await appends.value

    #expect(store.commitCount - commitsBefore == 1)
    #expect(store.rowsCommitted == entities)
    for (index, _) in journals.enumerated() {
      let (_, actions) = try await recovered(try await store.journal(for: "e\(index)"))
      #expect(actions == [.add("item \(index)")])
    }
    await store.close()
  }

  @Test("two journals of one id: the second one's append fails typed, and the history is the first one's")
  func conflict() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    let first = try await store.journal(for: "ada")
    let second = try await store.journal(for: "ada")
    try await append([.add("first")], to: first)
    let failure = await error { try await append([.add("second")], to: second) }
    #expect(failure as? SQLiteStoreError == .conflict(entity: "\"ada\"", sequence: 1))
    try await append([.add("more")], to: first)
    let (_, actions) = try await recovered(try await store.journal(for: "ada"))
    #expect(actions == [.add("first"), .add("more")])
    await store.close()
  }

  @Test("a journal whose entity moved on cannot snapshot over it")
  func staleSnapshotRefused() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    let stale = try await store.journal(for: "ada")
    try await append([.add("one")], to: stale)
    let current = try await store.journal(for: "ada")
    _ = try await recovered(current)
    try await append([.add("two")], to: current)
    let failure = await error { try await stale.snapshot(Cart(items: ["one"])) }
    #expect(failure as? SQLiteStoreError == .conflict(entity: "\"ada\"", sequence: 1))
    let (state, actions) = try await recovered(try await store.journal(for: "ada"))
    #expect(state == nil)
    #expect(actions == [.add("one"), .add("two")])
    await store.close()
  }

  @Test(
    "each durability sets WAL mode and its sync level, read back from SQLite",
    arguments: [
      (JournalDurability.everyAction, 2, Duration?.none),
      (.interval(.milliseconds(20)), 1, .milliseconds(20)),
      (.operatingSystem, 1, nil),
    ])
  func durabilityPragmas(durability: JournalDurability, synchronous: Int, interval: Duration?) async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database, durability: durability)
    #expect(store.settings == SQLiteSettings(journalMode: "wal", synchronous: synchronous))
    #expect(store.syncInterval == interval)
    let journal = try await store.journal(for: "ada")
    #expect(journal.syncInterval == nil)
    try await append([.add("tea")], to: journal)
    try await journal.sync()
    try await store.sync()
    await store.close()
    #expect(try RawDatabase.journalMode(scratch.database) == "wal")
  }

  @Test("a database written with another schema version, or other types, is refused typed and left as it was")
  func schemaMismatch() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database, schemaVersion: 1)
    try await append([.add("tea")], to: try await store.journal(for: "ada"))
    await store.close()
    let before = try contents(of: scratch.database)

    #expect(throws: SQLiteStoreError.schemaMismatch(path: scratch.database, expected: 2, found: 1)) {
      try CartStore(path: scratch.database, schemaVersion: 2)
    }
    #expect {
      try SQLiteEntityStore<Int, Cart, CartAction>(path: scratch.database)
    } throws: { error in
      guard case .incompatible(_, let expected, let found) = error as? SQLiteStoreError else { return false }
      return expected.contains("Swift.Int") && found.contains("Swift.String")
    }
    #expect(try contents(of: scratch.database) == before)
    // Nothing was left open: the right types open it.
    let again = try CartStore(path: scratch.database, schemaVersion: 1)
    let (_, actions) = try await recovered(try await again.journal(for: "ada"))
    #expect(actions == [.add("tea")])
    await again.close()
  }

  @Test("after the store closes, its journals and the store refuse with .closed")
  func useAfterClose() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database, durability: .operatingSystem)
    let journal = try await store.journal(for: "ada")
    await store.close()
    await store.close()  // a second close changes nothing
    #expect(await error { try await append([.add("tea")], to: journal) } as? SQLiteStoreError == .closed)
    #expect(await error { try await journal.snapshot(Cart()) } as? SQLiteStoreError == nil)  // nothing to snapshot
    #expect(await error { try await journal.sync() } as? SQLiteStoreError == .closed)
    #expect(await error { try await store.journal(for: "bob") } as? SQLiteStoreError == .closed)
    #expect(await error { try await store.sync() } as? SQLiteStoreError == .closed)
    // A closed journal refuses too.
    let reopened = try CartStore(path: scratch.database)
    let closing = try await reopened.journal(for: "ada")
    await closing.close()
    #expect(await error { try await append([.add("tea")], to: closing) } as? SQLiteStoreError == .closed)
    await reopened.close()
  }

  @Test("ids are stored as their JSON, keys sorted")
  func entityKeys() async throws {
    struct Account: Codable, Hashable, Sendable {
      var user: Int
      var shard: Int
    }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try SQLiteEntityStore<Account, Cart, CartAction>(path: scratch.database)
    try await append([.add("tea")], to: try await store.journal(for: Account(user: 7, shard: 3)))
    await store.close()
    let raw = try RawDatabase(scratch.database)
    #expect(raw.rows("SELECT CAST(entity AS TEXT) FROM records") == [[#"{"shard":3,"user":7}"#]])
  }
}

extension RawDatabase {
  static func journalMode(_ path: String) throws -> String? {
    let database = try RawDatabase(path)
    return database.rows("PRAGMA journal_mode").first?.first
  }
}
