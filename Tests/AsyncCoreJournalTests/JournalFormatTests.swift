import AsyncCoreJournal
import Testing

@Suite("Journal file format")
struct JournalFormatTests {
  @Test("a frame reads back as the record written, with its time, and ends where the next begins")
  func frameRoundTrip() {
    var bytes: [UInt8] = []
    JournalFormat.appendFrame(sequence: 7, time: 0x0102_0304_0506_0708, body: [1, 2, 3], to: &bytes)
    JournalFormat.appendFrame(sequence: 8, time: -1, body: [], to: &bytes)
    #expect(bytes.count == 2 * (JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes) + 3)
    // length (sequence + time + body), then the CRC-32C of the payload,
    // then the sequence and the time, every integer little-endian
    #expect(Array(bytes[0..<4]) == [19, 0, 0, 0])
    let payload: [UInt8] = [7, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3]
    let checksum = CRC32C.checksum(payload)
    #expect(Array(bytes[4..<8]) == [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: checksum >> $0) })
    #expect(Array(bytes[8..<27]) == payload)

    guard
      case .record(let first, let time, let body, let end) = JournalFormat.decodeFrame(
        bytes, at: 0, maximumPayload: 100)
    else {
      Issue.record("the first frame did not read back")
      return
    }
    #expect(first == 7)
    #expect(time == 0x0102_0304_0506_0708)
    #expect(Array(bytes[body]) == [1, 2, 3])
    guard
      case .record(let second, let secondTime, let emptyBody, let last) = JournalFormat.decodeFrame(
        bytes, at: end, maximumPayload: 100)
    else {
      Issue.record("the second frame did not read back")
      return
    }
    #expect(second == 8)
    #expect(secondTime == -1)
    #expect(emptyBody.isEmpty)
    #expect(last == bytes.count)
  }

  @Test("this layout is format 2: a payload carries a time after its sequence, which format 1 did not")
  func formatVersion() {
    #expect(JournalFormat.version == 2)
    #expect(JournalFormat.payloadPrefixBytes == 16)
  }

  @Test("a frame cut short is torn, a changed byte a checksum mismatch, an impossible length absurd")
  func damagedFrames() {
    var bytes: [UInt8] = []
    JournalFormat.appendFrame(sequence: 1, time: 1_000, body: [9, 9, 9, 9], to: &bytes)
    #expect(JournalFormat.decodeFrame(Array(bytes.dropLast()), at: 0, maximumPayload: 100) == .torn)
    #expect(JournalFormat.decodeFrame(Array(bytes.prefix(5)), at: 0, maximumPayload: 100) == .torn)
    var flipped = bytes
    flipped[14] ^= 0x10
    #expect(JournalFormat.decodeFrame(flipped, at: 0, maximumPayload: 100) == .checksumMismatch)
    var otherTime = bytes
    otherTime[17] ^= 0x01  // the time is under the checksum too
    #expect(JournalFormat.decodeFrame(otherTime, at: 0, maximumPayload: 100) == .checksumMismatch)
    #expect(JournalFormat.decodeFrame(bytes, at: 0, maximumPayload: 19) == .absurdLength(20))
    var tooShort = bytes
    tooShort[0] = 15  // shorter than its sequence number and time
    #expect(JournalFormat.decodeFrame(tooShort, at: 0, maximumPayload: 100) == .absurdLength(15))
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
