import AsyncCore
import AsyncCoreJournal
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

/// Every hundredth `add` starts a `.send(.echo)` (reduced with it, not
/// journaled) and a `.run` that sends `.bonus` back (journaled as any action).
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

/// Collects what a core reports to its diagnostics handler.
final class Reports: Sendable {
  let failures = Mutex<[EffectFailure]>([])
  var handler: @Sendable (EffectFailure) -> Void { { failure in self.failures.withLock { $0.append(failure) } } }
  var diagnostics: [JournalDiagnostic] { failures.withLock { $0.compactMap { $0.error as? JournalDiagnostic } } }
}

func openLedger(
  _ directory: String, durability: JournalDurability = .everyAction, snapshotEvery: Int? = 10_000,
  codec: some JournalCodec = JSONJournalCodec(), reports: Reports = Reports()
) async throws(JournaledCoreError) -> JournaledCore<Ledger, LedgerAction> {
  try await JournaledCore(
    directory: directory, durability: durability, snapshotEvery: snapshotEvery, codec: codec,
    initialState: Ledger(), diagnostics: reports.handler, reducer: ledgerReducer)
}

@Suite("A core on a journal", .timeLimit(.minutes(2)))
struct CoreJournalTests {
  @Test("4 producers dispatch 1,000 actions each, sharing syncs; a core reopened on the journal recovers the same state")
  func reopenedCoreRecoversTheState() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for producer in 0..<4 {
        group.addTask {
          for index in 0..<1_000 {
            let handle = try await core.dispatch(.add(producer: producer, index: index))
            if index % 100 == 0 { try await handle.finish() }
          }
        }
      }
      try await group.waitForAll()
    }
    let final = await core.state
    #expect(final.count == 4_000)
    #expect(final.bonuses == 40)
    #expect(final.echoes == 40)
    // Group commit: one append (and one fdatasync) per take, fewer than the
    // 4,040 journaled actions.
    #expect(core.metrics.drainSlices < 4_040)
    await core.shutdown()

    let reopened = try await openLedger(scratch.journal)
    #expect(reopened.recovery.recordsReplayed == 4_040)
    #expect(await reopened.state == final)
    await reopened.shutdown()
  }

  @Test("8 producers looping dispatch share each append: more than 6 actions per fdatasync on average, not 4")
  func groupCommitCarriesEveryWaitingProducer() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, snapshotEvery: nil)
    let producers = 8
    let perProducer = 250
    try await withThrowingTaskGroup(of: Void.self) { group in
      for producer in 0..<producers {
        group.addTask {
          // Indices not multiples of 100: no follow-up actions.
          for index in 1...perProducer { try await core.dispatch(.add(producer: producer, index: index)) }
        }
      }
      try await group.waitForAll()
    }
    #expect(await core.state.count == producers * perProducer)
    // One drain turn is one append and one fdatasync. Producers that queue
    // again only after the next append started settle into two groups
    // that alternate: 4 actions per turn.
    let turns = core.metrics.drainSlices
    #expect(turns * 6 < producers * perProducer, "\(turns) appends for \(producers * perProducer) actions")
    await core.shutdown()
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

    let reopened = try await openLedger(scratch.journal, snapshotEvery: 100)
    #expect(reopened.recovery.snapshotSequence != nil)
    #expect(reopened.recovery.recordsReplayed < 100)
    #expect(await reopened.state == final)
    await reopened.shutdown()
  }

  @Test("an action the codec refuses: its dispatch throws and it is not reduced; a sent one is reported; the rest go on")
  func anActionNotJournaledIsNotReduced() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let reports = Reports()
    let core = try await openLedger(scratch.journal, codec: RefusingCodec(), reports: reports)
    try await core.dispatch(.add(producer: 0, index: 1))
    let error = await #expect(throws: JournaledCoreError.self) { try await core.dispatch(.unencodable) }
    #expect(error == .encodingFailed(description: "Refused()"))
    core.send(.add(producer: 0, index: 2))
    core.send(.unencodable)
    core.send(.add(producer: 0, index: 3))
    #expect(await core.state == reference([1, 2, 3]))
    let notJournaled = reports.diagnostics.map(\.description)
    #expect(
      notJournaled == [
        "AsyncCoreJournal: \"unencodable\" was not journaled, so not reduced: "
          + "AsyncCoreJournal: the codec could not encode the action: Refused()"
      ])
    #expect(reports.failures.withLock { $0.map(\.description) }.allSatisfy { $0.hasPrefix("AsyncCoreJournal: ") })
    await core.shutdown()

    let reopened = try await openLedger(scratch.journal, codec: RefusingCodec())
    #expect(reopened.recovery.recordsReplayed == 3)
    #expect(await reopened.state == reference([1, 2, 3]))
    await reopened.shutdown()
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
    let reopened = try await openLedger(scratch.journal, reports: reports)
    #expect(reopened.recovery.recordsReplayed == 9)
    #expect(reopened.recovery.damage.count == 1)
    #expect(reopened.recovery.damage.first?.reason == .tornRecord)
    #expect(await reopened.state == reference(1...9))
    guard case .damageMovedAside(let damage)? = reports.diagnostics.first else {
      Issue.record("no damage reported: \(reports.diagnostics)")
      return
    }
    #expect(damage == reopened.recovery.damage.first)
    #expect(names(in: scratch.journal).contains { $0.contains(".aside-at-") })
    await reopened.shutdown()
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
      _ = try await JournaledCore(
        directory: scratch.journal, schemaVersion: 2, initialState: Ledger(), reducer: ledgerReducer)
      Issue.record("opened a journal of schema 1 as schema 2")
    } catch {
      guard case .journal(.incompatible(_, let expected, let found)) = error else {
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
    await #expect(throws: JournaledCoreError.journal(.locked(path: scratch.journal))) {
      _ = try await openLedger(scratch.journal)
    }
    await first.shutdown()
    let second = try await openLedger(scratch.journal)
    #expect(await second.state == reference([1]))
    await second.shutdown()
  }

  @Test("after shutdown, dispatch throws shutDown and send returns .shutDown; nothing more is journaled")
  func shutDownRefuses() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let core = try await openLedger(scratch.journal, durability: .interval(.milliseconds(5)))
    try await core.dispatch(.add(producer: 0, index: 1))
    await core.shutdown()
    await #expect(throws: JournaledCoreError.shutDown) { try await core.dispatch(.add(producer: 0, index: 2)) }
    #expect(core.send(.add(producer: 0, index: 3)) == .shutDown)
    let reopened = try await openLedger(scratch.journal)
    #expect(reopened.recovery.recordsReplayed == 1)
    await reopened.shutdown()
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
