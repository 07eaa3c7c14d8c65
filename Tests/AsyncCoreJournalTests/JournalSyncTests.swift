import AsyncCoreJournal
import Synchronization
import Testing

@Suite("Journal sync, lock released")
struct JournalSyncTests {
  @Test("an append from inside a sync, once the lock is released, goes on; its record stays due for the next sync")
  func appendDuringSync() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .interval(.milliseconds(10)))
    defer { journal.close() }
    try journal.append([probeBody(1)])
    final class Appended: Sendable { let range = Mutex<Range<UInt64>?>(nil) }
    let appended = Appended()
    journal.whileSyncing.withLock { hook in
      hook = { [journal] in
        let range = try? journal.append([probeBody(2)])
        appended.range.withLock { $0 = range }
      }
    }
    try journal.sync()
    journal.whileSyncing.withLock { $0 = nil }
    #expect(appended.range.withLock { $0 } == 2..<3, "the append ran while the sync was in progress")
    #expect(try journal.syncIfDue(now: .now + .seconds(3600)), "record 2 came after the sync began: still unsynced")
    #expect(try !journal.syncIfDue(now: .now + .seconds(7200)), "nothing unsynced after that")
  }
}
