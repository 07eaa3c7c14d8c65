import AsyncCoreJournal
import Foundation
import Testing

@Suite("Journal recovery, streamed")
struct JournalRecoveryTests {
  @Test("200,000 records: open keeps no body and reads one chunk at a time; batches of 1,000 hand out every record")
  func streamingIsBounded() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let count = 200_000
    do {
      let (journal, _) = try Journal.open(
        directory: scratch.journal, identity: testIdentity, durability: .operatingSystem)
      for start in stride(from: 1, through: count, by: 1_000) {
        try journal.append((UInt64(start)..<UInt64(start + 1_000)).map { probeBody($0) })
      }
      journal.close()
    }
    let segmentBytes = contents(of: onlySegment(in: scratch.journal)).count
    let chunk = 1 << 20
    #expect(segmentBytes > 8 * chunk, "the journal is many chunks long")

    let (journal, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .operatingSystem)
    defer { journal.close() }
    #expect(recovered.recordCount == count)
    #expect(recovered.openStatistics.bodyBytesKept == 0, "open copied no record body")
    #expect(recovered.openStatistics.largestBuffer <= chunk, "open held one chunk at a time")
    #expect(recovered.openStatistics.bytesRead >= segmentBytes - 4_096, "open read every record, to check it")
    #expect(recovered.openStatistics.bytesRead < segmentBytes + chunk, "open read the segment once")

    var statistics = JournalReadStatistics()
    var batches: [Int] = []
    var next: UInt64 = 1
    var mismatches = 0
    try recovered.readRecords(batch: 1_000, statistics: &statistics) { records in
      batches.append(records.count)
      for record in records {
        if record.sequence != next || record.body != probeBody(next) { mismatches += 1 }
        next += 1
      }
    }
    #expect(mismatches == 0)
    #expect(next == UInt64(count) + 1)
    #expect(batches.count == count / 1_000)
    #expect(batches.max() == 1_000, "the largest batch handed out")
    #expect(statistics.largestBuffer <= chunk, "streaming held one chunk at a time")
    #expect(statistics.bytesRead < segmentBytes + chunk, "streaming read the segment once")
    let bodies = (1...UInt64(count)).reduce(0) { $0 + probeBody($1).count }
    #expect(statistics.bodyBytesKept == bodies, "each body copied once")
  }

  @Test(
    "batches run across segments, start after the snapshot, and the last one is short", arguments: [1, 7, 40, 1_000])
  func batchesAcrossSegments(batch: Int) throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    do {
      let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
      try journal.append((1...30).map { probeBody($0) })
      try journal.writeSnapshot([0x01], coveringThrough: 20)
      try journal.append((31...45).map { probeBody($0) })
      try journal.writeSnapshot([0x02], coveringThrough: 25)
      try journal.append((46...50).map { probeBody($0) })
      journal.close()
    }
    let (journal, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    defer { journal.close() }
    #expect(recovered.snapshot?.sequence == 25)
    #expect(recovered.recordCount == 25)
    var batches: [[UInt64]] = []
    try recovered.readRecords(batch: batch) { batches.append($0.map(\.sequence)) }
    #expect(batches.flatMap { $0 } == Array(26...50))
    let counts = Array(repeating: batch, count: 25 / batch) + (25 % batch == 0 ? [] : [25 % batch])
    #expect(batches.map(\.count) == counts)
    // Read twice before the first append: the same records.
    #expect(try recovered.allRecords().map(\.sequence) == Array(26...50))
  }

  @Test("a record changed after the open is an error naming its offset, never skipped")
  func changedRecordIsAnError() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    do {
      let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
      try journal.append((1...10).map { probeBody($0) })
      journal.close()
    }
    let (journal, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    defer { journal.close() }
    let segment = onlySegment(in: scratch.journal)
    let header = JournalFormat.encode(.init(kind: .segment, identity: testIdentity, sequence: 1)).count
    let sixth = header + (1...5).reduce(0) { $0 + frameSize(probeBody($1)) }
    // A byte of record 6's body, flipped in place (the same file).
    let descriptor = open(segment, O_RDWR)
    try #require(descriptor >= 0)
    var byte: UInt8 = 0
    let bodyByte = off_t(sixth + JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes)
    #expect(pread(descriptor, &byte, 1, bodyByte) == 1)
    byte ^= 0xFF
    #expect(pwrite(descriptor, &byte, 1, bodyByte) == 1)
    close(descriptor)

    var seen: [UInt64] = []
    #expect(throws: JournalError.changedSinceOpen(path: segment, offset: sixth)) {
      try recovered.readRecords(batch: 2) { seen += $0.map(\.sequence) }
    }
    #expect(seen == [1, 2, 3, 4], "the batches before the damage, and none after")
  }

  @Test("a segment replaced or cut after the open is an error")
  func replacedSegmentIsAnError() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    do {
      let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
      try journal.append((1...10).map { probeBody($0) })
      journal.close()
    }
    let (journal, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    defer { journal.close() }
    let segment = onlySegment(in: scratch.journal)
    let bytes = contents(of: segment)
    // The same bytes in a new file renamed over it: another inode.
    try bytes.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: segment), options: .atomic) }
    let replaced = #expect(throws: JournalError.self) { try recovered.allRecords() }
    guard case .changedSinceOpen(segment, _)? = replaced else {
      Issue.record("expected changedSinceOpen for \(segment), got \(String(describing: replaced))")
      return
    }
  }

  @Test("a recovery built from records in memory hands them out in batches")
  func inMemoryRecovery() throws {
    let records = (1...10).map { JournalRecord(sequence: $0, body: probeBody($0)) }
    let recovery = JournalRecovery(snapshot: nil, records: records, damage: [])
    #expect(recovery.recordCount == 10)
    var batches: [[JournalRecord]] = []
    try recovery.readRecords(batch: 4) { batches.append($0) }
    #expect(batches.map(\.count) == [4, 4, 2])
    #expect(batches.flatMap { $0 } == records)
  }

  @Test("an error thrown by the batch's body stops the read and comes out as thrown")
  func bodyErrorStopsTheRead() throws {
    struct Stop: Error, Equatable {}
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try journal.append((1...10).map { probeBody($0) })
    journal.close()
    let (reopened, recovered) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    defer { reopened.close() }
    var calls = 0
    #expect(throws: Stop()) {
      try recovered.readRecords(batch: 3) { _ in
        calls += 1
        if calls == 2 { throw Stop() }
      }
    }
    #expect(calls == 2)
  }

  @Test("reading the records after the first append, or after close, traps with a message")
  func readingLateTraps() async {
    let appended = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let scratch = try Scratch()
      let (journal, recovered) = try Journal.open(
        directory: scratch.journal, identity: testIdentity, durability: .everyAction)
      try journal.append([[1]])
      try recovered.readRecords(batch: 1) { _ in }
    }
    let closed = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let scratch = try Scratch()
      let (journal, recovered) = try Journal.open(
        directory: scratch.journal, identity: testIdentity, durability: .everyAction)
      journal.close()
      try recovered.readRecords(batch: 1) { _ in }
    }
    for result in [appended, closed] {
      let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
      #expect(message.contains("JournalRecovery.readRecords: called after the journal's first append"), "\(message)")
    }
  }
}
