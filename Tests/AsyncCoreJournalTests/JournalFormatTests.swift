import AsyncCoreJournal
import Testing

@Suite("Journal file format")
struct JournalFormatTests {
  @Test("a frame reads back as the record written, and ends where the next begins")
  func frameRoundTrip() {
    var bytes: [UInt8] = []
    JournalFormat.appendFrame(sequence: 7, body: [1, 2, 3], to: &bytes)
    JournalFormat.appendFrame(sequence: 8, body: [], to: &bytes)
    #expect(bytes.count == 2 * (JournalFormat.frameOverhead + JournalFormat.sequenceBytes) + 3)
    // length (sequence + body), then the CRC-32C of the payload, little-endian
    #expect(Array(bytes[0..<4]) == [11, 0, 0, 0])
    let checksum = CRC32C.checksum([7, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3])
    #expect(Array(bytes[4..<8]) == [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: checksum >> $0) })

    guard case .record(let first, let body, let end) = JournalFormat.decodeFrame(bytes, at: 0, maximumPayload: 100)
    else {
      Issue.record("the first frame did not read back")
      return
    }
    #expect(first == 7)
    #expect(Array(bytes[body]) == [1, 2, 3])
    guard
      case .record(let second, let emptyBody, let last) = JournalFormat.decodeFrame(bytes, at: end, maximumPayload: 100)
    else {
      Issue.record("the second frame did not read back")
      return
    }
    #expect(second == 8)
    #expect(emptyBody.isEmpty)
    #expect(last == bytes.count)
  }

  @Test("a frame cut short is torn, a changed byte a checksum mismatch, an impossible length absurd")
  func damagedFrames() {
    var bytes: [UInt8] = []
    JournalFormat.appendFrame(sequence: 1, body: [9, 9, 9, 9], to: &bytes)
    #expect(JournalFormat.decodeFrame(Array(bytes.dropLast()), at: 0, maximumPayload: 100) == .torn)
    #expect(JournalFormat.decodeFrame(Array(bytes.prefix(5)), at: 0, maximumPayload: 100) == .torn)
    var flipped = bytes
    flipped[14] ^= 0x10
    #expect(JournalFormat.decodeFrame(flipped, at: 0, maximumPayload: 100) == .checksumMismatch)
    #expect(JournalFormat.decodeFrame(bytes, at: 0, maximumPayload: 11) == .absurdLength(12))
    var tooShort = bytes
    tooShort[0] = 3  // shorter than its sequence number
    #expect(JournalFormat.decodeFrame(tooShort, at: 0, maximumPayload: 100) == .absurdLength(3))
  }

  @Test("a header reads back with its types, schema version and sequence; a changed byte damages it")
  func headerRoundTrip() throws {
    let header = JournalFormat.Header(kind: .snapshot, identity: testIdentity, sequence: 42)
    let bytes = JournalFormat.encode(header)
    let (decoded, length) = try JournalFormat.decodeHeader(bytes[...]).get()
    #expect(decoded == header)
    #expect(length == bytes.count)
    #expect(Array(bytes.prefix(8)) == Array("ACJOURNL".utf8))
    var flipped = bytes
    flipped[30] ^= 1
    #expect(throws: JournalFormat.HeaderProblem.damaged) { try JournalFormat.decodeHeader(flipped[...]).get() }
    #expect(throws: JournalFormat.HeaderProblem.short) { try JournalFormat.decodeHeader(bytes.dropLast()).get() }
  }
}
