import AsyncCoreJournal
import Foundation
import Testing

@Suite("Journal: append and recovery")
struct JournalTests {
  /// Opens the journal in `scratch`, appends `batches` of probe bodies, closes it.
  func write(_ batches: [Int], in scratch: Scratch) throws {
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    for size in batches {
      let first = journal.nextSequence
      let sequences = try journal.append((0..<UInt64(size)).map { probeBody(first + $0) })
      #expect(sequences == first..<first + UInt64(size))
    }
    journal.close()
  }

  func expectedRecords(_ sequences: ClosedRange<UInt64>) -> [JournalRecord] {
    sequences.map { JournalRecord(sequence: $0, body: probeBody($0)) }
  }

  /// Where record `sequence` starts in a segment whose first record is 1.
  func offset(ofRecord sequence: UInt64) -> Int {
    let header = JournalFormat.encode(.init(kind: .segment, identity: testIdentity, sequence: 1)).count
    return header + (1..<sequence).reduce(0) { $0 + frameSize(probeBody($1)) }
  }

  @Test("batches appended read back as the same records, in order, with no damage")
  func batchesRoundTrip() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write([1, 10, 100], in: scratch)
    let (journal, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(try recovered.untimed == Recovered(snapshot: nil, records: expectedRecords(1...111), damage: []))
    #expect(journal.nextSequence == 112)
  }

  @Test("records appended in one call share a wall-clock time; a later call's is not earlier; the reader sees the same")
  func recordsCarryTheTimeOfTheirAppend() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let wallClock = Int64(Date().timeIntervalSince1970 * 1e9)
    try write([3, 2], in: scratch)
    let (journal, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    let records = try recovered.allRecords()
    journal.close()
    let times = records.map(\.time)
    try #require(times.count == 5)
    #expect(Set(times[0..<3]).count == 1, "one batch, one time: \(times)")
    #expect(Set(times[3..<5]).count == 1, "one batch, one time: \(times)")
    #expect(times[3] >= times[0])
    // Not a timing test: the field holds the wall clock's nanoseconds since
    // 1970 (not 0, not a monotonic clock's), give or take a generous minute.
    #expect(abs(times[0] - wallClock) < 60_000_000_000, "\(times[0]) against the test's \(wallClock)")
    #expect(abs(times[4] - wallClock) < 60_000_000_000, "\(times[4]) against the test's \(wallClock)")
    // The read-only reader gives the same records, times included.
    var read: [JournalRecord] = []
    try JournalReader(directory: scratch.journal).scan { item in
      if case .record(let record, _, _) = item { read.append(record) }
      return .proceed
    }
    #expect(read == records)
  }

  @Test("a journal of format 1 (records without a time) is refused as unsupported, and no file changes")
  func formatOneIsRefused() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try FileManager.default.createDirectory(atPath: scratch.journal, withIntermediateDirectories: false)
    // A format-1 segment: its header, then one frame whose payload is
    // `sequence · body`, with no time.
    var bytes = JournalFormat.encode(.init(kind: .segment, formatVersion: 1, identity: testIdentity, sequence: 1))
    let payload: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0] + probeBody(1)
    let checksum = CRC32C.checksum(payload)
    bytes += [UInt8(payload.count), 0, 0, 0] + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: checksum >> $0) }
    bytes += payload
    let segment = scratch.journal + "/segment-00000000000000000001.log"
    try overwrite(segment, with: bytes)
    #expect(throws: JournalError.unsupportedFormat(path: segment, version: 1)) {
      try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    }
    #expect(
      JournalError.unsupportedFormat(path: segment, version: 1).description
        == "\"\(segment)\" is in journal format 1, which this version does not read")
    #expect(names(in: scratch.journal) == ["segment-00000000000000000001.log"])
    #expect(contents(of: segment) == bytes)
  }

  @Test("a file cut inside its last record: the whole records are kept, the cut bytes moved aside and reported")
  func tornLastRecord() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write([10], in: scratch)
    let segment = onlySegment(in: scratch.journal)
    let original = contents(of: segment)
    #expect(original.count == offset(ofRecord: 11))
    let cut = original.count - 5
    #expect(truncate(segment, off_t(cut)) == 0)

    let (journal, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    let start = offset(ofRecord: 10)
    let aside = segment + ".aside-at-\(start)"
    #expect(try recovered.allRecords().map(\.untimed) == expectedRecords(1...9))
    #expect(
      recovered.damage == [
        JournalDamage(path: segment, offset: start, byteCount: cut - start, reason: .tornRecord, asidePath: aside)
      ])
    #expect(contents(of: aside) == Array(original[start..<cut]))
    #expect(contents(of: segment) == Array(original[..<start]))
    // The journal goes on from the last whole record.
    #expect(try journal.append([probeBody(10)]) == 10..<11)
    journal.close()
    let (_, again) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(try again.untimed == Recovered(snapshot: nil, records: expectedRecords(1...10), damage: []))
  }

  @Test("a byte changed in the middle: recovery stops at the last good record and moves the rest aside")
  func flippedByte() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write([4, 6], in: scratch)
    let segment = onlySegment(in: scratch.journal)
    var bytes = contents(of: segment)
    let start = offset(ofRecord: 5)
    bytes[start + 26] ^= 0x01  // inside record 5's body
    try overwrite(segment, with: bytes)

    let (_, recovered) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    let aside = segment + ".aside-at-\(start)"
    #expect(try recovered.allRecords().map(\.untimed) == expectedRecords(1...4))
    #expect(
      recovered.damage == [
        JournalDamage(
          path: segment, offset: start, byteCount: bytes.count - start, reason: .checksumMismatch, asidePath: aside)
      ])
    #expect(contents(of: aside) == Array(bytes[start...]))
    #expect(contents(of: segment) == Array(bytes[..<start]))
  }

  @Test("an impossible length is damage, not an allocation")
  func absurdLength() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write([3], in: scratch)
    let segment = onlySegment(in: scratch.journal)
    var bytes = contents(of: segment)
    let start = offset(ofRecord: 3)
    bytes.replaceSubrange(start..<start + 4, with: [0xFF, 0xFF, 0xFF, 0x7F])
    try overwrite(segment, with: bytes)
    let (_, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction, maximumRecordBytes: 1024)
    #expect(try recovered.allRecords().map(\.untimed) == expectedRecords(1...2))
    #expect(recovered.damage.map(\.reason) == [.absurdLength(0x7FFF_FFFF)])
  }

  @Test("a journal error is one line: what failed, the system's words for errno, the path escaped")
  func errorDescriptions() {
    #expect(
      JournalError.writeFailed(path: "j/a\nb", errno: EFBIG).description
        == #"writing "j/a\u{A}b" failed: File too large (errno 27)"#)
    #expect(
      JournalError.locked(path: "j").description
        == #"the journal in "j" is open in another process or core (its lock is held)"#)
    #expect(
      JournalError.fileSystem(operation: "mkdir", path: "x/y", errno: ENOENT).description
        == #"mkdir "x/y" failed: No such file or directory (errno 2)"#)
  }

  @Test("a record longer than the reader's limit, written under a larger one, is read back whole, not moved aside")
  func longerRecordsThanTheLimitAreRead() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let long = [UInt8](repeating: 7, count: 2_000)
    do {
      let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
      try journal.append([[1], long, [3]])
      journal.close()
    }
    let (journal, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction, maximumRecordBytes: 1024)
    #expect(try recovered.allRecords().map(\.body.count) == [1, 2_000, 1])
    #expect(recovered.damage.isEmpty)
    #expect(names(in: scratch.journal).allSatisfy { !$0.contains("aside") })
    #expect(throws: JournalError.recordTooLarge(bytes: 2_000, limit: 1024)) { try journal.append([long]) }
    journal.close()
  }

  @Test(
    "a journal for another action type, state type or schema version is refused, and no file changes",
    arguments: [
      JournalIdentity(actionType: "Other.Action", stateType: "Probe.State", schemaVersion: 1),
      JournalIdentity(actionType: "Probe.Action", stateType: "Other.State", schemaVersion: 1),
      JournalIdentity(actionType: "Probe.Action", stateType: "Probe.State", schemaVersion: 2),
    ])
  func incompatibleHeader(other: JournalIdentity) throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write([5], in: scratch)
    // A torn tail too, which an accepted open would move aside.
    let segment = onlySegment(in: scratch.journal)
    #expect(truncate(segment, off_t(offset(ofRecord: 6) - 2)) == 0)
    let before = names(in: scratch.journal).map { ($0, contents(of: scratch.journal + "/" + $0)) }

    #expect(throws: JournalError.incompatible(path: segment, expected: other, found: testIdentity)) {
      try Journal.open(directory: scratch.journal, identity: other, durability: .everyAction)
    }
    let after = names(in: scratch.journal).map { ($0, contents(of: scratch.journal + "/" + $0)) }
    #expect(after.map(\.0) == before.map(\.0))
    #expect(after.map(\.1) == before.map(\.1))
  }

  @Test("the identity of a journal is the types' full names")
  func identityNames() {
    let identity = JournalIdentity(action: Int.self, state: [String].self, schemaVersion: 3)
    #expect(
      identity == JournalIdentity(actionType: "Swift.Int", stateType: "Swift.Array<Swift.String>", schemaVersion: 3))
  }

  @Test("a second open in the same process is refused while the first holds the journal, and allowed after close")
  func lockedInProcess() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(throws: JournalError.locked(path: scratch.journal)) {
      try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    }
    journal.close()
    #expect(throws: JournalError.closed) { try journal.append([[1]]) }
    _ = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
  }

  @Test("a record over the limit is refused before anything is written")
  func recordTooLarge() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction, maximumRecordBytes: 16)
    #expect(throws: JournalError.recordTooLarge(bytes: 17, limit: 16)) {
      try journal.append([[1], [UInt8](repeating: 0, count: 17)])
    }
    #expect(journal.nextSequence == 1)
    #expect(contents(of: onlySegment(in: scratch.journal)).count == offset(ofRecord: 1))
  }

  @Test("under an interval, syncIfDue syncs once the interval passed with records unsynced")
  func syncIfDue() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .interval(.seconds(60)))
    let now = ContinuousClock.now
    #expect(try !journal.syncIfDue(now: now + .seconds(120)))  // nothing appended
    try journal.append([[1]])
    #expect(try !journal.syncIfDue(now: now))
    #expect(try journal.syncIfDue(now: now + .seconds(120)))
    #expect(try !journal.syncIfDue(now: now + .seconds(240)))
  }
}
