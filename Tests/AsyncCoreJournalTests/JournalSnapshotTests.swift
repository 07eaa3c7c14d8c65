import AsyncCoreJournal
import Foundation
import Testing

/// The test's state: how many records and the sum of their bytes, 16 bytes.
struct Tally: Equatable {
  var count: UInt64 = 0
  var sum: UInt64 = 0

  mutating func reduce(_ body: [UInt8]) {
    count += 1
    sum += body.reduce(0) { $0 + UInt64($1) }
  }

  var bytes: [UInt8] {
    [count, sum].flatMap { value in (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
  }

  init() {}

  init(_ bytes: [UInt8]) {
    let words = stride(from: 0, to: 16, by: 8).map { start in
      bytes[start..<start + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
    count = words[0]
    sum = words[1]
  }

  /// The state after records 1 through `last`.
  static func through(_ last: UInt64) -> Tally {
    var tally = Tally()
    for sequence in 1...max(last, 1) where sequence <= last { tally.reduce(probeBody(sequence)) }
    return tally
  }

  /// The state a recovery rebuilds: its snapshot, then its records.
  static func recovered(_ recovery: JournalRecovery) throws -> Tally {
    var tally = recovery.snapshot.map { Tally($0.state) } ?? Tally()
    for record in try recovery.allRecords() { tally.reduce(record.body) }
    return tally
  }
}

@Suite("Journal snapshots and rotation")
struct JournalSnapshotTests {
  /// Appends records up to `last` (one batch), then snapshots the state through `snapshot`.
  func append(through last: UInt64, snapshot: UInt64?, to journal: Journal) throws {
    let first = journal.nextSequence
    try journal.append((first...last).map(probeBody))
    if let snapshot { try journal.writeSnapshot(Tally.through(snapshot).bytes, coveringThrough: snapshot) }
  }

  /// A journal with snapshots at 20, 50 and 70 and records through 90.
  func journalWithThreeSnapshots(in scratch: Scratch) throws {
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try append(through: 30, snapshot: 20, to: journal)
    try append(through: 60, snapshot: 50, to: journal)
    try append(through: 75, snapshot: 70, to: journal)
    try append(through: 90, snapshot: nil, to: journal)
    journal.close()
  }

  @Test("a snapshot's frame carries the wall-clock time it was written, as a record's does")
  func snapshotCarriesItsTime() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let wallClock = Int64(Date().timeIntervalSince1970 * 1e9)
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try append(through: 3, snapshot: 3, to: journal)
    journal.close()
    let snapshot = try #require(names(in: scratch.journal).first { $0.hasSuffix(".snap") })
    let bytes = contents(of: scratch.journal + "/" + snapshot)
    let (_, headerLength) = try JournalFormat.decodeHeader(bytes[...]).get()
    guard
      case .record(3, let time, let state, bytes.count) = JournalFormat.decodeFrame(
        bytes, at: headerLength, maximumPayload: 1_000)
    else {
      Issue.record("the snapshot's frame did not read back")
      return
    }
    #expect(Tally(Array(bytes[state])) == Tally.through(3))
    #expect(abs(time - wallClock) < 60_000_000_000, "\(time) against the test's \(wallClock)")
  }

  @Test("recovery from the snapshot and the records after it gives the state the whole log gives")
  func snapshotPlusTail() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try journalWithThreeSnapshots(in: scratch)
    let (_, recovered) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(recovered.snapshot?.sequence == 70)
    #expect(try recovered.allRecords().map(\.sequence) == Array(71...90))
    #expect(recovered.damage == [])
    #expect(try Tally.recovered(recovered) == Tally.through(90))
  }

  @Test("a snapshot rotates the log: two snapshots kept, segments only older snapshots covered removed")
  func rotation() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try journalWithThreeSnapshots(in: scratch)
    // Segments start at 1, 31, 61 and 76; the snapshot before the newest
    // (50) wholly covers only 1…30.
    #expect(
      names(in: scratch.journal) == [
        "segment-00000000000000000031.log", "segment-00000000000000000061.log", "segment-00000000000000000076.log",
        "snapshot-00000000000000000050.snap", "snapshot-00000000000000000070.snap",
      ])
  }

  @Test("a damaged newest snapshot: recovery falls back to the previous one, reports it, and gets the same state")
  func damagedSnapshotFallsBack() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try journalWithThreeSnapshots(in: scratch)
    let newest = scratch.journal + "/snapshot-00000000000000000070.snap"
    var bytes = contents(of: newest)
    bytes[bytes.count - 3] ^= 0x40
    try overwrite(newest, with: bytes)

    let (_, recovered) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(recovered.snapshot?.sequence == 50)
    #expect(try recovered.allRecords().map(\.sequence) == Array(51...90))
    #expect(
      recovered.damage == [
        JournalDamage(
          path: newest, offset: 0, byteCount: bytes.count, reason: .damagedSnapshot, asidePath: newest + ".aside-at-0")
      ])
    #expect(contents(of: newest + ".aside-at-0") == bytes)
    #expect(try Tally.recovered(recovered) == Tally.through(90))
  }

  @Test("both snapshots damaged, the records before them removed: the error lists both, moved aside, by name")
  func bothSnapshotsDamaged() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try journalWithThreeSnapshots(in: scratch)
    var damage: [JournalDamage] = []
    for sequence in [70, 50] {
      let snapshot = scratch.journal + "/snapshot-000000000000000000\(sequence).snap"
      var bytes = contents(of: snapshot)
      bytes[bytes.count - 3] ^= 0x40
      try overwrite(snapshot, with: bytes)
      damage.append(
        JournalDamage(
          path: snapshot, offset: 0, byteCount: bytes.count, reason: .damagedSnapshot,
          asidePath: snapshot + ".aside-at-0"))
    }

    let segment = scratch.journal + "/segment-00000000000000000031.log"
    let error = #expect(throws: JournalError.self) {
      try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    }
    #expect(error == .missingRecords(after: 0, path: segment, damagedSnapshots: damage))
    #expect(
      error?.description
        == "records after 0 are missing: no snapshot or segment leads to \"\(segment)\"; "
        + "the damaged snapshots were moved aside: \"\(damage[0].path)\" to \"\(damage[0].asidePath)\", "
        + "\"\(damage[1].path)\" to \"\(damage[1].asidePath)\"")
  }

  @Test("the only snapshot damaged: recovery starts from the first record")
  func onlySnapshotDamaged() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try append(through: 30, snapshot: 20, to: journal)
    try append(through: 40, snapshot: nil, to: journal)
    journal.close()
    let snapshot = scratch.journal + "/snapshot-00000000000000000020.snap"
    try overwrite(snapshot, with: Array(contents(of: snapshot).dropLast()))

    let (_, recovered) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(recovered.snapshot == nil)
    #expect(try recovered.allRecords().map(\.sequence) == Array(1...40))
    #expect(recovered.damage.map(\.reason) == [.damagedSnapshot])
    #expect(try Tally.recovered(recovered) == Tally.through(40))
  }
}
