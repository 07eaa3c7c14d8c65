import AsyncCore
import AsyncCoreJournal
import AsyncCoreProcessTestSupport
import Foundation
import Synchronization
import Testing

/// A state whose checksum depends on the order actions were reduced in.
struct Ledger: Codable, Sendable, Equatable {
  var count = 0
  var checksum = 0
  var bonuses = 0
  var echoes = 0
}

enum LedgerAction: Codable, Sendable, Equatable {
  case add(producer: Int, index: Int)
  case bonus(producer: Int)
  case echo
  /// Refused by `RefusingCodec`: never journaled.
  case unencodable
}

/// Every hundredth `add` starts a `.send(.echo)` and a `.run` that sends
/// `.bonus` back; both are journaled, as every action reduced.
let ledgerReducer = Reduce<Ledger, LedgerAction> { state, action in
  switch action {
  case .add(let producer, let index):
    state.count += 1
    state.checksum = state.checksum &* 31 &+ (producer * 10_000 + index)
    if index % 100 == 0 {
      return .merge([.send(.echo), .run { send in await send(.bonus(producer: producer)) }])
    }
  case .bonus(let producer):
    state.bonuses += 1
    state.checksum = state.checksum &* 31 &+ producer
  case .echo:
    state.echoes += 1
  case .unencodable:
    state.count += 1_000_000
  }
  return .none
}

/// The ledger after `.add(producer: 0, index: i)` for each `i` in `indices`,
/// reduced in a plain loop (no echoes nor bonuses: indices not multiples of 100).
func reference(_ indices: some Sequence<Int>) -> Ledger {
  var ledger = Ledger()
  for index in indices {
    ledger.count += 1
    ledger.checksum = ledger.checksum &* 31 &+ index
  }
  return ledger
}

/// JSON, except that it refuses to encode `LedgerAction.unencodable`.
struct RefusingCodec: JournalCodec {
  struct Refused: Error {}
  func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    if let action = value as? LedgerAction, action == .unencodable { throw Refused() }
    return try JSONJournalCodec().encode(value)
  }
  func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    try JSONJournalCodec().decode(type, from: bytes)
  }
}

/// JSON, except that `Step.note("huge")` encodes to 17 MiB (over the
/// journal's 16 MiB record limit) without the cost of encoding that much.
struct InflatingCodec: JournalCodec {
  func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    if case .note("huge")? = value as? Step { return [UInt8](repeating: 0x20, count: 17 << 20) }
    return try JSONJournalCodec().encode(value)
  }
  func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    try JSONJournalCodec().decode(type, from: bytes)
  }
}

/// Collects what a core and its journal report to their diagnostics handler.
final class Reports: Sendable {
  let failures = Mutex<[EffectFailure]>([])
  var handler: @Sendable (EffectFailure) -> Void { { failure in self.failures.withLock { $0.append(failure) } } }
  var diagnostics: [JournalDiagnostic] { failures.withLock { $0.compactMap { $0.error as? JournalDiagnostic } } }
  var coreDiagnostics: [CoreDiagnostic] { failures.withLock { $0.compactMap { $0.error as? CoreDiagnostic } } }
}

/// A durable ledger core on the file journal in `directory`, and what the
/// journal found when it opened.
func openLedgerRecovering(
  _ directory: String, durability: JournalDurability = .everyAction, snapshotEvery: Int? = 10_000,
  codec: some JournalCodec = JSONJournalCodec(), reports: Reports = Reports()
) async throws -> (Core<Ledger, LedgerAction>, FileJournalRecovery) {
  let journal = try FileJournal<Ledger, LedgerAction>(
    directory: directory, durability: durability, snapshotEvery: snapshotEvery, codec: codec,
    diagnostics: reports.handler)
  let core = try await Core(
    initialState: Ledger(), journal: journal, diagnostics: reports.handler, reducer: ledgerReducer)
  return (core, journal.recovery)
}

func openLedger(
  _ directory: String, durability: JournalDurability = .everyAction, snapshotEvery: Int? = 10_000,
  codec: some JournalCodec = JSONJournalCodec(), reports: Reports = Reports()
) async throws -> Core<Ledger, LedgerAction> {
  try await openLedgerRecovering(
    directory, durability: durability, snapshotEvery: snapshotEvery, codec: codec, reports: reports
  ).0
}

/// A durable core of `Step`s on the file journal in `directory`.
func openSteps(
  _ directory: String, durability: JournalDurability = .operatingSystem, codec: some JournalCodec = JSONJournalCodec(),
  reports: Reports = Reports(), reducer: Reduce<[String], Step> = stepReducer
) async throws -> Core<[String], Step> {
  let journal = try FileJournal<[String], Step>(
    directory: directory, durability: durability, codec: codec, diagnostics: reports.handler)
  return try await Core(initialState: [String](), journal: journal, diagnostics: reports.handler, reducer: reducer)
}

@Suite("A durable core on a file journal", .timeLimit(.minutes(5)))
struct CoreJournalTests {
  @Test("4 producers dispatch 1,000 actions each, sharing syncs; reopened, the core recovers the same state")
  func reopenedCoreRecoversTheState() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal)
    // A quarter under a sanitizer: each slice is an fdatasync.
    let perProducer = Environment.sanitizer == nil ? 1_000 : 250
    try await withThrowingTaskGroup(of: Void.self) { group in
      for producer in 0..<4 {
        group.addTask {
          for index in 0..<perProducer {
            let handle = try await core.dispatch(.add(producer: producer, index: index))
            if index % 100 == 0 { try await handle.finish() }
          }
        }
      }
      try await group.waitForAll()
    }
    let final = await core.state
    // Indices 0, 100, 200…: each starts a .send and a .run.
    let withEffects = 4 * ((perProducer + 99) / 100)
    #expect(final.count == 4 * perProducer)
    #expect(final.bonuses == withEffects)
    #expect(final.echoes == withEffects)
    // Group commit: one append (and one fdatasync) per take, fewer than the
    // journaled actions: each add, each echo and each bonus.
    let journaled = 4 * perProducer + 2 * withEffects
    #expect(core.metrics.drainSlices < journaled)
    await core.shutdown()

    let (reopened, reopenedRecovery) = try await openLedgerRecovering(scratch.journal)
    #expect(reopenedRecovery.recordsToReplay == journaled)
    #expect(await reopened.state == final)
    await reopened.shutdown()
  }

  @Test("a task reads its own sends, and waitUntilIdle and shutdown wait for the journal's drain")
  func readsItsOwnWrites() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, durability: .operatingSystem)
    for _ in 1...1_000 { core.send(.add(producer: 0, index: 1)) }
    #expect(await core.state.count == 1_000)
    for _ in 1...1_000 { core.send(.add(producer: 0, index: 1)) }
    try await core.waitUntilIdle()
    #expect(core.metrics.queueDepth == 0)
    #expect(core.metrics.actionsReduced == 2_000)
    for _ in 1...1_000 { core.send(.add(producer: 0, index: 1)) }
    await core.shutdown()
    #expect(core.metrics.actionsReduced == 3_000)

    let reopened = try await openLedger(scratch.journal)
    #expect(await reopened.state.count == 3_000)
    await reopened.shutdown()
  }

  @Test("snapshots every 100 records: a reopened core starts from the newest and replays fewer than 100")
  func snapshotsShortenRecovery() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, durability: .operatingSystem, snapshotEvery: 100)
    for index in 1...1_050 where index % 100 != 0 { try await core.dispatch(.add(producer: 0, index: index)) }
    let final = await core.state
    #expect(final == reference((1...1_050).filter { $0 % 100 != 0 }))
    await core.shutdown()

    let (reopened, reopenedRecovery) = try await openLedgerRecovering(scratch.journal, snapshotEvery: 100)
    #expect(reopenedRecovery.snapshotSequence != nil)
    #expect(reopenedRecovery.recordsToReplay < 100)
    #expect(await reopened.state == final)
    await reopened.shutdown()
  }

  @Test("snapshots every B bytes of records, when that comes before N records; reopened, it starts from the newest")
  func snapshotsByBytes() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    // Each record is a JSON add of about 40 bytes plus its frame: 2,000 bytes is a few dozen records.
    let journal = try FileJournal<Ledger, LedgerAction>(
      directory: scratch.journal, durability: .operatingSystem, snapshotEvery: 1_000_000, snapshotEveryBytes: 2_000)
    let core = try await Core(initialState: Ledger(), journal: journal, reducer: ledgerReducer)
    for index in 1...199 where index % 100 != 0 { try await core.dispatch(.add(producer: 0, index: index)) }
    let final = await core.state
    await core.shutdown()
    #expect(names(in: scratch.journal).contains { $0.hasSuffix(".snap") })

    let (reopened, recovery) = try await openLedgerRecovering(scratch.journal, snapshotEvery: nil)
    let snapshot = try #require(recovery.snapshotSequence)
    #expect(snapshot > 150)
    #expect(recovery.recordsToReplay < 50)
    #expect(await reopened.state == final)
    await reopened.shutdown()
  }

  @Test("an action the codec refuses: dispatch throws, it is not reduced; a sent one is reported; the rest go on")
  func anActionNotJournaledIsNotReduced() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let reports = Reports()
    let core = try await openLedger(scratch.journal, codec: RefusingCodec(), reports: reports)
    try await core.dispatch(.add(producer: 0, index: 1))
    await #expect(throws: CoreError.journal(JournalError.encodingFailed(description: "Refused()"))) {
      try await core.dispatch(.unencodable)
    }
    core.send(.add(producer: 0, index: 2))
    core.send(.unencodable)
    core.send(.add(producer: 0, index: 3))
    #expect(await core.state == reference([1, 2, 3]))
    #expect(
      reports.failures.withLock { $0.map(\.description) } == [
        "AsyncCore: the journal did not take unencodable, so it was not reduced: the codec could not encode it: Refused()"
      ])
    await core.shutdown()

    let (reopened, reopenedRecovery) = try await openLedgerRecovering(scratch.journal, codec: RefusingCodec())
    #expect(reopenedRecovery.recordsToReplay == 3)
    #expect(await reopened.state == reference([1, 2, 3]))
    await reopened.shutdown()
  }

  @Test("an action over the record limit fails alone: the others of its slice are journaled and reduced")
  func anOversizedActionFailsAlone() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let reports = Reports()
    let core = try await openSteps(scratch.journal, codec: InflatingCodec(), reports: reports)
    let huge = "huge"
    // One send: the three are in one take, so one append.
    core.send(contentsOf: [.note("before"), .note(huge), .note("after")])
    #expect(await core.state == ["before", "after"])
    let refused = reports.coreDiagnostics.compactMap { diagnostic -> JournalError? in
      if case .notJournaled(_, let error) = diagnostic { return error as? JournalError }
      return nil
    }
    #expect(refused.count == 1)
    guard case .recordTooLarge(let bytes, let limit)? = refused.first else {
      Issue.record("refused with \(refused)")
      return
    }
    #expect(bytes > limit)
    #expect(reports.coreDiagnostics.first?.description.count ?? .max < 400)
    await #expect(throws: CoreError.journal(JournalError.recordTooLarge(bytes: bytes, limit: limit))) {
      try await core.dispatch(.note(huge))
    }
    await core.shutdown()
  }

  @Test("a private type's journal identity is the same in every launch: its name holds no context address")
  func privateTypesHaveAStableIdentity() {
    let identity = JournalIdentity(action: PrivateAction.self, state: [PrivateAction].self, schemaVersion: 1)
    #expect(identity.actionType == "AsyncCoreJournalTests.PrivateAction")
    #expect(identity.stateType == "Swift.Array<AsyncCoreJournalTests.PrivateAction>")
  }

  @Test("a torn last record: the reopened core recovers the records before it and reports the damage moved aside")
  func tornTailIsReported() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal)
    for index in 1...10 { try await core.dispatch(.add(producer: 0, index: index)) }
    await core.shutdown()
    let segment = onlySegment(in: scratch.journal)
    let bytes = contents(of: segment)
    try overwrite(segment, with: Array(bytes.dropLast(3)))

    let reports = Reports()
    let (reopened, reopenedRecovery) = try await openLedgerRecovering(scratch.journal, reports: reports)
    #expect(reopenedRecovery.recordsToReplay == 9)
    #expect(reopenedRecovery.damage.count == 1)
    #expect(reopenedRecovery.damage.first?.reason == .tornRecord)
    #expect(await reopened.state == reference(1...9))
    guard case .damageMovedAside(let damage)? = reports.diagnostics.first else {
      Issue.record("no damage reported: \(reports.diagnostics)")
      return
    }
    #expect(damage == reopenedRecovery.damage.first)
    #expect(names(in: scratch.journal).contains { $0.contains(".aside-at-") })
    await reopened.shutdown()
  }

  @Test("a byte flipped in the middle: the reopened core recovers the records before it, moves the rest aside, goes on")
  func flippedByteIsReported() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal)
    for index in 1...10 { try await core.dispatch(.add(producer: 0, index: index)) }
    await core.shutdown()
    // A byte of the sixth record's body: after the header and five frames
    // (24 bytes of length, checksum, sequence and time, then the JSON body).
    let identity = JournalIdentity(action: LedgerAction.self, state: Ledger.self, schemaVersion: 1)
    let header = JournalFormat.encode(.init(kind: .segment, identity: identity, sequence: 1)).count
    let fiveFrames = try (1...5).reduce(0) {
      $0 + frameSize(try JSONJournalCodec().encode(LedgerAction.add(producer: 0, index: $1)))
    }
    let segment = onlySegment(in: scratch.journal)
    var bytes = contents(of: segment)
    bytes[header + fiveFrames + frameSize([]) + 3] ^= 0x20
    try overwrite(segment, with: bytes)

    let reports = Reports()
    let (reopened, reopenedRecovery) = try await openLedgerRecovering(scratch.journal, reports: reports)
    #expect(reopenedRecovery.recordsToReplay == 5)
    #expect(reopenedRecovery.damage.map(\.reason) == [.checksumMismatch])
    #expect(reopenedRecovery.damage.first?.offset == header + fiveFrames)
    #expect(reopenedRecovery.damage.first?.byteCount == bytes.count - header - fiveFrames)
    #expect(await reopened.state == reference(1...5))
    guard case .damageMovedAside(let damage)? = reports.diagnostics.first else {
      Issue.record("no damage reported: \(reports.diagnostics)")
      return
    }
    #expect(damage == reopenedRecovery.damage.first)
    // It goes on from there, and the next opening finds no damage.
    try await reopened.dispatch(.add(producer: 0, index: 6))
    await reopened.shutdown()
    let (again, againRecovery) = try await openLedgerRecovering(scratch.journal)
    #expect(againRecovery.damage == [])
    #expect(await again.state == reference(1...6))
    await again.shutdown()
  }

  @Test("another schema version is refused with a typed error, and the journal is left as it was")
  func anotherSchemaIsRefused() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal)
    try await core.dispatch(.add(producer: 0, index: 1))
    await core.shutdown()
    let before = names(in: scratch.journal).map { contents(of: scratch.journal + "/" + $0) }
    do {
      _ = try FileJournal<Ledger, LedgerAction>(directory: scratch.journal, schemaVersion: 2)
      Issue.record("opened a journal of schema 1 as schema 2")
    } catch {
      guard case .incompatible(_, let expected, let found) = error else {
        Issue.record("refused with \(error)")
        return
      }
      #expect(expected.schemaVersion == 2)
      #expect(found.schemaVersion == 1)
    }
    #expect(names(in: scratch.journal).map { contents(of: scratch.journal + "/" + $0) } == before)
  }

  @Test("a second core on the same journal is refused while the first is open, and opens once it shut down")
  func oneCorePerJournal() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let first = try await openLedger(scratch.journal)
    try await first.dispatch(.add(producer: 0, index: 1))
    await #expect(throws: JournalError.locked(path: scratch.journal)) {
      _ = try await openLedger(scratch.journal)
    }
    await first.shutdown()
    let second = try await openLedger(scratch.journal)
    #expect(await second.state == reference([1]))
    await second.shutdown()
  }

  @Test("after shutdown, dispatch, enqueue and sync throw CoreError.shutDown, send returns .shutDown")
  func shutDownRefuses() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, durability: .operatingSystem)
    try await core.dispatch(.add(producer: 0, index: 1))
    await core.shutdown()
    #expect(core.hasShutDown)
    await #expect(throws: CoreError.shutDown) { try await core.dispatch(.add(producer: 0, index: 2)) }
    await #expect(throws: CoreError.shutDown) { try await core.enqueue(.add(producer: 0, index: 3)) }
    await #expect(throws: CoreError.shutDown) { try await core.sync() }
    #expect(core.send(.add(producer: 0, index: 4)) == .shutDown)
    #expect(core.send(contentsOf: [.add(producer: 0, index: 5)]) == .shutDown)
    let (reopened, reopenedRecovery) = try await openLedgerRecovering(scratch.journal)
    #expect(reopenedRecovery.recordsToReplay == 1)
    await reopened.shutdown()
  }

  @Test("a missing journal directory is made; a missing parent is refused with mkdir's ENOENT, and nothing is made")
  func missingDirectoryAndParent() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    #expect(!FileManager.default.fileExists(atPath: scratch.journal))
    let core = try await openLedger(scratch.journal)
    try await core.dispatch(.add(producer: 0, index: 1))
    await core.shutdown()
    #expect(names(in: scratch.journal) == ["segment-00000000000000000001.log"])

    let orphan = scratch.path + "/absent/journal"
    await #expect(throws: JournalError.fileSystem(operation: "mkdir", path: orphan, errno: ENOENT)) {
      _ = try await openLedger(orphan)
    }
    #expect(names(in: scratch.path) == ["journal"])
  }

  @Test("its directory removed and a second core opened there: the first fails, shuts down; the second keeps its own")
  func removedDirectoryStopsTheCore() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let reports = Reports()
    // A snapshot every 2 records: a first core that went on would write one into the second's journal.
    let first = try await openLedger(scratch.journal, durability: .operatingSystem, snapshotEvery: 2, reports: reports)
    try await first.dispatch(.add(producer: 1, index: 1))
    try FileManager.default.removeItem(atPath: scratch.journal)
    let second = try await openLedger(scratch.journal, durability: .operatingSystem)
    try await second.dispatch(.add(producer: 0, index: 1))

    let removed = CoreError.journal(JournalError.directoryRemoved(path: scratch.journal))
    await #expect(throws: removed) { try await first.dispatch(.add(producer: 1, index: 2)) }
    #expect(first.hasShutDown)
    await #expect(throws: CoreError.shutDown) { try await first.dispatch(.add(producer: 1, index: 3)) }
    #expect(first.send(.add(producer: 1, index: 4)) == .shutDown)
    await #expect(throws: CoreError.shutDown) { try await first.sync() }
    await first.shutdown()
    let failed = reports.coreDiagnostics.compactMap { diagnostic -> JournalError? in
      if case .journalFailed(let error) = diagnostic { return error as? JournalError }
      return nil
    }
    #expect(failed == [.directoryRemoved(path: scratch.journal)])

    await second.shutdown()
    #expect(names(in: scratch.journal) == ["segment-00000000000000000001.log"])
    let (reopened, reopenedRecovery) = try await openLedgerRecovering(scratch.journal)
    #expect(reopenedRecovery.snapshotSequence == nil)
    #expect(await reopened.state == reference([1]))
    await reopened.shutdown()
  }

  @Test(
    "both snapshots damaged and the records before them gone: each is reported moved aside, and the error names them")
  func bothSnapshotsDamagedAreReported() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, durability: .operatingSystem, snapshotEvery: 10)
    for index in 1...35 { try await core.dispatch(.add(producer: 0, index: index)) }
    await core.shutdown()
    let snapshots = names(in: scratch.journal).filter { $0.hasSuffix(".snap") }.map { scratch.journal + "/" + $0 }
    #expect(snapshots.count == 2)
    for snapshot in snapshots {
      var bytes = contents(of: snapshot)
      bytes[bytes.count - 3] ^= 0x40
      try overwrite(snapshot, with: bytes)
    }

    let reports = Reports()
    let error = await #expect(throws: JournalError.self) {
      _ = try await openLedger(scratch.journal, reports: reports)
    }
    let moved = reports.diagnostics.compactMap { diagnostic -> JournalDamage? in
      if case .damageMovedAside(let damage) = diagnostic { return damage }
      return nil
    }
    #expect(moved.map(\.path).sorted() == snapshots)
    #expect(moved.allSatisfy { $0.reason == .damagedSnapshot })
    let text = error.map(String.init(describing:)) ?? ""
    for snapshot in snapshots { #expect(text.contains(snapshot), "\(text)") }
  }

  @Test("a burst is journaled and reduced a slice of 16,384 at a time, published once per slice")
  func burstIsJournaledSliceBySlice() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, durability: .operatingSystem)
    let counts = Mutex<[Int]>([])
    let subscriber = await core.subscribe(to: \.count) { count in counts.withLock { $0.append(count) } }
    // One send: the drain's first take finds all of it pending.
    let burst = Array(repeating: LedgerAction.add(producer: 0, index: 1), count: 3 * 16_384)
    #expect(core.send(contentsOf: burst) == .accepted)
    #expect(await core.state.count == 3 * 16_384)
    #expect(counts.withLock { $0 } == [0, 16_384, 32_768, 49_152])
    #expect(core.metrics.drainSlices == 3)
    subscriber.cancel()
    await core.shutdown()
  }

  @Test("run() ties the core to a task: cancelling it shuts the core down and releases the journal")
  func runReleasesTheJournalOnCancel() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal)
    let service = Task { try await core.run() }
    try await core.dispatch(.add(producer: 0, index: 1))
    service.cancel()
    try await service.value
    #expect(core.hasShutDown)
    let reopened = try await openLedger(scratch.journal)
    #expect(await reopened.state == reference([1]))
    await reopened.shutdown()
  }

  @Test("an interval too long to sleep in one go (\"never on a timer\"): the core journals, syncs on demand, recovers")
  func hugeIntervalStillWorks() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, durability: .interval(.seconds(Int64.max)))
    try await core.dispatch(.add(producer: 0, index: 1))
    try await core.sync()
    await core.shutdown()
    let reopened = try await openLedger(scratch.journal)
    #expect(await reopened.state == reference([1]))
    await reopened.shutdown()
  }

  @Test("an interval under 1 ms, or snapshots 0 records or 0 bytes apart, stop the program with a message")
  func misconfigurationStopsWithAMessage() async throws {
    let interval = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = try? FileJournal<[String], Step>(directory: "/tmp/never-opened", durability: .interval(.zero))
    }
    let intervalError = String(decoding: try #require(interval).standardErrorContent, as: UTF8.self)
    #expect(
      intervalError.contains("AsyncCore: FileJournal(durability: .interval(0.0 seconds)): the interval must be"))
    let snapshots = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = try? FileJournal<[String], Step>(directory: "/tmp/never-opened", snapshotEvery: 0)
    }
    let snapshotsError = String(decoding: try #require(snapshots).standardErrorContent, as: UTF8.self)
    #expect(snapshotsError.contains("AsyncCore: FileJournal(snapshotEvery: 0): a snapshot bound must be at least 1"))
    let bytes = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = try? FileJournal<[String], Step>(directory: "/tmp/never-opened", snapshotEveryBytes: 0)
    }
    let bytesError = String(decoding: try #require(bytes).standardErrorContent, as: UTF8.self)
    #expect(bytesError.contains("AsyncCore: FileJournal(snapshotEveryBytes: 0): a snapshot bound must be at least 1"))
  }

  @Test("observers get the journaled state, the current value first")
  func observersSeeJournaledState() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, durability: .operatingSystem)
    try await core.dispatch(.add(producer: 0, index: 1))
    let counts = await core.observe(\.count)
    var iterator = counts.makeAsyncIterator()
    #expect(await iterator.next() == 1)
    try await core.dispatch(.add(producer: 0, index: 2))
    #expect(await iterator.next() == 2)
    await core.shutdown()
    #expect(await iterator.next() == nil)
  }
}

private enum PrivateAction {}

/// A log of reduced actions, in order: recovery must give the same log.
enum Step: Codable, Sendable {
  case go(Int)
  case note(String)
}

let stepReducer = Reduce<[String], Step> { log, step in
  switch step {
  case .note(let text):
    log.append(text)
    return text == "nest" ? .send(.note("nested")) : .none
  case .go(let shape):
    log.append("go\(shape)")
    switch shape {
    case 0:
      return .merge([.send(.note("m1")), .run { send in await send(.note("m2")) }, .send(.note("m3"))])
    case 1:
      return .concatenate([.send(.note("c1")), .send(.note("nest")), .send(.note("c2"))])
    case 2:
      return .concatenate([.send(.note("c3")), .run { send in await send(.note("c4")) }, .send(.note("c5"))])
    case 3:
      return .send(.note("k")).cancellable(id: "k")
    default:
      return .merge([.send(.note("nest")), .cancel(id: "k"), .send(.note("after"))])
    }
  }
}

/// How many times the effect of `.go(0)` ran, process-wide (the suite runs
/// its tests one at a time).
let effectRuns = Mutex(0)

@Suite(
  "A durable core's recovery replays effects' actions as they were reduced", .serialized,
  .timeLimit(.minutes(5)))
struct JournaledEffectsTests {
  @Test("recovery starts no effect: an effect that ran before the restart does not run again")
  func recoveryStartsNoEffect() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let counting = Reduce<[String], Step> { log, step in
      log.append("\(step)")
      guard case .go = step else { return .none }
      return .run { send in
        effectRuns.withLock { $0 += 1 }
        await send(.note("ran"))
      }
    }
    let before = effectRuns.withLock { $0 }
    let core = try await openSteps(scratch.journal, reducer: counting)
    try await core.dispatch(.go(0)).finish()
    try await core.dispatch(.go(1)).finish()
    let live = await core.state
    await core.shutdown()
    #expect(effectRuns.withLock { $0 } == before + 2)

    let reopened = try await openSteps(scratch.journal, reducer: counting)
    try await reopened.waitUntilIdle()
    #expect(await reopened.state == live)
    #expect(effectRuns.withLock { $0 } == before + 2)
    await reopened.shutdown()
  }

  @Test("merge, concatenate (synchronous and not), cancellable and nested sends: the reopened log is the live log")
  func recoveryReplaysEffectsInTheLiveOrder() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openSteps(scratch.journal)
    for shape in [0, 1, 2, 3, 4, 2, 0] {
      try await core.dispatch(.go(shape)).finish()
    }
    let live = await core.state
    #expect(live.contains("c4") && live.contains("m2") && live.contains("nested"))
    await core.shutdown()

    let reopened = try await openSteps(scratch.journal)
    #expect(await reopened.state == live)
    await reopened.shutdown()
  }
}
