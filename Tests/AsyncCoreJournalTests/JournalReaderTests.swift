import AsyncCoreJournal
import Foundation
import Testing

@Suite("JournalReader: the inspector's read-only scan of a journal's files")
struct JournalReaderTests {
  /// A journal written frame by frame: a snapshot through 2 whose state
  /// is larger than a small chunk, a segment from 1 with one large record,
  /// a segment from 51 with a bad checksum at 56, a segment from 57 cut
  /// inside its last record (so after 55, a gap). Returns the items a scan must give, in order.
  func writeJournal(in scratch: Scratch) throws -> [JournalReader.Item] {
    try FileManager.default.createDirectory(atPath: scratch.journal, withIntermediateDirectories: false)
    var items: [JournalReader.Item] = []
    func name(_ kind: String, _ sequence: UInt64, _ suffix: String) -> String {
      let digits = String(sequence)
      return scratch.journal + "/\(kind)-" + String(repeating: "0", count: 20 - digits.count) + digits + suffix
    }

    let snapshot = name("snapshot", 2, ".snap")
    var bytes = JournalFormat.encode(.init(kind: .snapshot, identity: testIdentity, sequence: 2))
    JournalFormat.appendFrame(sequence: 2, time: 2_000, body: [UInt8](repeating: 7, count: 3_000), to: &bytes)
    try overwrite(snapshot, with: bytes)
    items.append(.snapshot(path: snapshot, sequence: 2, state: [UInt8](repeating: 7, count: 3_000)))

    /// A segment from `first` holding `count` records; `damage` changes its bytes once written.
    func segment(from first: UInt64, count: UInt64, damage: (inout [UInt8], _ offsets: [Int]) -> Void) throws
      -> [Int]
    {
      let path = name("segment", first, ".log")
      var bytes = JournalFormat.encode(.init(kind: .segment, identity: testIdentity, sequence: first))
      var offsets: [Int] = []
      for sequence in first..<first + count {
        offsets.append(bytes.count)
        let body = sequence == 41 ? [UInt8](repeating: 41, count: 3_000) : probeBody(sequence)
        JournalFormat.appendFrame(sequence: sequence, time: Int64(sequence) * 1_000, body: body, to: &bytes)
        items.append(
          .record(
            JournalRecord(sequence: sequence, body: body, time: Int64(sequence) * 1_000), path: path,
            offset: offsets.last!))
      }
      damage(&bytes, offsets)
      try overwrite(path, with: bytes)
      return offsets
    }

    items.append(.segment(path: name("segment", 1, ".log"), first: 1))
    _ = try segment(from: 1, count: 50) { _, _ in }
    let second = name("segment", 51, ".log")
    items.append(.segment(path: second, first: 51))
    let offsets = try segment(from: 51, count: 10) { bytes, offsets in
      bytes[offsets[5] + JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes] ^= 0xff  // 56's body
    }
    items.removeLast(5)  // 56 to 60: 56 is damaged, and the frames after it cannot be found
    items.append(.problem(JournalProblem(path: second, offset: offsets[5], reason: .checksumMismatch)))
    let third = name("segment", 61, ".log")
    items.append(
      .problem(JournalProblem(path: third, offset: 0, reason: .sequenceGap(expected: 56, found: 61))))
    items.append(.segment(path: third, first: 61))
    let thirdOffsets = try segment(from: 61, count: 5) { bytes, _ in bytes.removeLast(3) }
    items.removeLast()  // 65 is cut
    items.append(.problem(JournalProblem(path: third, offset: thirdOffsets[4], reason: .tornRecord)))
    return items
  }

  func scan(_ reader: JournalReader, until stop: (JournalReader.Item) -> Bool = { _ in false }) throws
    -> [JournalReader.Item]
  {
    var items: [JournalReader.Item] = []
    try reader.scan { item in
      items.append(item)
      return stop(item) ? .stop : .proceed
    }
    return items
  }

  @Test(
    "the same items, offsets and problems whatever the chunk size: frames across chunks, frames larger than a chunk",
    arguments: [8, 9, 100, 4_096, 1 << 20])
  func sameItemsForEveryChunkSize(chunkBytes: Int) throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let expected = try writeJournal(in: scratch)
    let items = try scan(JournalReader(directory: scratch.journal, chunkBytes: chunkBytes))
    #expect(items.count == expected.count)
    for (item, wanted) in zip(items, expected) where item != wanted {
      Issue.record("\(item) is not \(wanted)")
    }
  }

  @Test("a record longer than the record limit but within its file is whole; one past the file's end is torn")
  func believableLengthAsRecovery() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let expected = try writeJournal(in: scratch)
    // Record 41 (3,000 bytes) is over a 1,000-byte limit, but it fits in its file: believed, as recovery does.
    let limited = try scan(JournalReader(directory: scratch.journal, maximumRecordBytes: 1_000, chunkBytes: 64))
    #expect(limited == expected)
  }

  @Test("a visitor that stops ends the scan there: no item after it, and a later unreadable file is not opened")
  func stopsWhereTheVisitorSays() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let expected = try writeJournal(in: scratch)
    // A "segment" that is a directory: reading it fails, so a scan that reaches it throws.
    let unreadable = scratch.journal + "/segment-00000000000000000099.log"
    try FileManager.default.createDirectory(atPath: unreadable, withIntermediateDirectories: false)
    #expect(throws: JournalError.self) { try scan(JournalReader(directory: scratch.journal)) }
    let isFortyFive: (JournalReader.Item) -> Bool = { item in
      if case .record(let record, _, _) = item { record.sequence == 45 } else { false }
    }
    let stopped = try scan(JournalReader(directory: scratch.journal, chunkBytes: 64), until: isFortyFive)
    let through = try #require(expected.firstIndex(where: isFortyFive))
    #expect(stopped == Array(expected[...through]))
    let last = try scan(JournalReader(directory: scratch.journal)) { $0 == expected.last }
    #expect(last == expected)
  }

  /// A journal of `records` records with a snapshot every 10, as a core
  /// with `snapshotEvery: 10` leaves it; returns it open.
  func liveJournal(in scratch: Scratch, records: UInt64) throws -> Journal {
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try append(to: journal, through: records)
    return journal
  }

  /// Appends records up to `last`, writing a snapshot after each tenth.
  func append(to journal: Journal, through last: UInt64) throws {
    while journal.nextSequence <= last {
      let sequence = journal.nextSequence
      _ = try journal.append([probeBody(sequence)])
      if sequence % 10 == 0 { try journal.writeSnapshot([UInt8(sequence)], coveringThrough: sequence) }
    }
  }

  /// The snapshots' and segments' first sequences, and the records', of `items`.
  func outline(_ items: [JournalReader.Item]) -> (snapshots: [UInt64], segments: [UInt64], records: [UInt64]) {
    var outline: (snapshots: [UInt64], segments: [UInt64], records: [UInt64]) = ([], [], [])
    for item in items {
      switch item {
      case .snapshot(_, let sequence, _): outline.snapshots.append(sequence)
      case .segment(_, let first): outline.segments.append(first)
      case .record(let record, _, _): outline.records.append(record.sequence)
      case .problem(let problem): Issue.record("a problem: \(problem)")
      }
    }
    return outline
  }

  @Test("a live writer's rotation during the scan removes files listed: the scan still reads them whole")
  func rotationDuringTheScan() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let journal = try liveJournal(in: scratch, records: 25)
    defer { journal.close() }
    // Snapshots through 10 and 20, segments from 11 and 21. At the first
    // item, the writer goes on to 35: its snapshot through 30 removes the
    // snapshot through 10 and the segment from 11, which the scan listed.
    var rotated = false
    let items = try scan(JournalReader(directory: scratch.journal)) { _ in
      if !rotated {
        rotated = true
        try? append(to: journal, through: 35)
      }
      return false
    }
    #expect(!FileManager.default.fileExists(atPath: scratch.journal + "/snapshot-00000000000000000010.snap"))
    let read = outline(items)
    #expect(read.snapshots == [10, 20])
    #expect(read.segments == [11, 21])
    #expect(read.records == Array(11...30), "the records the listed files held, the appends since included")
  }

  @Test("a file gone between the listing and its opening makes the scan list again, and read what is there")
  func listsAgainWhenAFileVanished() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let journal = try liveJournal(in: scratch, records: 25)
    defer { journal.close() }
    var reader = JournalReader(directory: scratch.journal)
    var listings = 0
    reader.afterListing = {
      listings += 1
      if listings == 1 { try? append(to: journal, through: 35) }
    }
    let read = outline(try scan(reader))
    #expect(listings == 2)
    #expect(read.snapshots == [20, 30])
    #expect(read.segments == [21, 31])
    #expect(read.records == Array(21...35))
  }

  @Test("files that vanish at every listing end the scan with one problem: the journal is changing")
  func changingAtEveryListing() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try liveJournal(in: scratch, records: 5).close()
    var reader = JournalReader(directory: scratch.journal)
    var listings = 0
    var segment = onlySegment(in: scratch.journal)
    reader.afterListing = {
      // A rename: the name listed is gone, and the next listing finds another.
      listings += 1
      let digits = String(listings + 1)
      let renamed = scratch.journal + "/segment-" + String(repeating: "0", count: 20 - digits.count) + digits + ".log"
      rename(segment, renamed)
      segment = renamed
    }
    let items = try scan(reader)
    #expect(listings == reader.listingAttempts)
    #expect(items == [.problem(JournalProblem(path: scratch.journal, offset: 0, reason: .changing(attempts: 10)))])
    #expect(items.first.map { "\($0)" }?.contains("changed under the read 10 times in a row") == true)
  }

  @Test("a deleted newest segment is a problem: the snapshot before it says a segment follows it")
  func missingNewestSegment() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try liveJournal(in: scratch, records: 25).close()
    #expect(outline(try scan(JournalReader(directory: scratch.journal))).records == Array(11...25))
    let newest = scratch.journal + "/segment-00000000000000000021.log"
    try FileManager.default.removeItem(atPath: newest)
    let items = try scan(JournalReader(directory: scratch.journal))
    #expect(items.last == .problem(JournalProblem(path: newest, offset: 0, reason: .missingSegment(after: 20))))
    #expect(items.filter { if case .problem = $0 { true } else { false } }.count == 1)
    // A journal whose last act was a snapshot has its empty segment after it, and no problem.
    try FileManager.default.removeItem(atPath: scratch.journal)
    try liveJournal(in: scratch, records: 20).close()
    #expect(outline(try scan(JournalReader(directory: scratch.journal))).segments == [11, 21])
  }

  @Test("the newest segment cut inside a record that grows while it is read is a write in progress, not damage")
  func appendInProgress() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try liveJournal(in: scratch, records: 5).close()
    let segment = onlySegment(in: scratch.journal)
    var frame: [UInt8] = []
    JournalFormat.appendFrame(sequence: 6, time: 6_000, body: probeBody(6), to: &frame)
    let whole = contents(of: segment)
    try overwrite(segment, with: whole + frame.prefix(10))
    // Without a writer the cut is damage.
    let cut = try scan(JournalReader(directory: scratch.journal))
    #expect(cut.last == .problem(JournalProblem(path: segment, offset: whole.count, reason: .tornRecord)))
    // A writer finishing the record while record 5 is read: the view ends before it.
    let items = try scan(JournalReader(directory: scratch.journal)) { item in
      if case .record(let record, _, _) = item, record.sequence == 5 {
        try? overwrite(segment, with: whole + frame)
      }
      return false
    }
    #expect(outline(items).records == Array(1...5))
  }
}
