/// The bytes of a journal's files: a header, then frames.
///
/// A header (every segment and every snapshot starts with one):
///
///     magic "ACJOURNL" · format version UInt16 · kind UInt16 · header length UInt32
///     · schema version Int64 · sequence UInt64
///     · action type name (UInt32 length + UTF-8) · state type name (UInt32 length + UTF-8)
///     · CRC-32C of all the above UInt32
///
/// A frame: `length UInt32 · CRC-32C of payload UInt32 · payload`, where the
/// payload is `sequence UInt64 · time Int64 · body` (an encoded action, or a
/// snapshot's state). Every integer is little-endian. The sequence inside the
/// checksummed payload lets recovery check that records follow each other
/// with no gap and no repetition, which a CRC of each frame alone cannot.
/// The time is when the frame was written, in nanoseconds since
/// 1970-01-01 00:00 UTC (the system's real-time clock, read once per append
/// call: the records of one batch share it); a snapshot's frame carries the
/// time its file was written.
///
/// Format 1 had no time (`sequence UInt64 · body`); format 2 added it.
///
/// `package`: the tests build damaged files with it.
package enum JournalFormat {
  /// The first eight bytes of every file of a journal.
  package static let magic: [UInt8] = Array("ACJOURNL".utf8)
  /// This layout's version; a file of another version is refused.
  package static let version: UInt16 = 2
  /// Bytes before a frame's payload: its length and its checksum.
  package static let frameOverhead = 8
  /// Bytes of a payload before its body: the sequence number and the time.
  package static let payloadPrefixBytes = 16
  /// A header longer than this is damaged (type names are short).
  static let maximumHeaderBytes = 64 * 1024

  /// What a header says the file is.
  package enum Kind: UInt16, Sendable {
    case segment = 1
    case snapshot = 2
  }

  /// A decoded header.
  package struct Header: Equatable, Sendable {
    package var kind: Kind
    package var formatVersion: UInt16
    package var identity: JournalIdentity
    /// A segment's first sequence number; the sequence a snapshot covers through.
    package var sequence: UInt64

    package init(kind: Kind, formatVersion: UInt16 = JournalFormat.version, identity: JournalIdentity, sequence: UInt64)
    {
      self.kind = kind
      self.formatVersion = formatVersion
      self.identity = identity
      self.sequence = sequence
    }
  }

  /// Why a header or a frame could not be read.
  package enum HeaderProblem: Error, Equatable, Sendable {
    /// Fewer bytes than the header needs.
    case short
    /// The magic, a length or the checksum is wrong.
    case damaged
  }

  /// The header's bytes.
  package static func encode(_ header: Header) -> [UInt8] {
    var bytes = magic
    bytes.appendLittleEndian(header.formatVersion)
    bytes.appendLittleEndian(header.kind.rawValue)
    let action = Array(header.identity.actionType.utf8)
    let state = Array(header.identity.stateType.utf8)
    let length = magic.count + 2 + 2 + 4 + 8 + 8 + 4 + action.count + 4 + state.count + 4
    bytes.appendLittleEndian(UInt32(length))
    bytes.appendLittleEndian(Int64(header.identity.schemaVersion))
    bytes.appendLittleEndian(header.sequence)
    bytes.appendLittleEndian(UInt32(action.count))
    bytes += action
    bytes.appendLittleEndian(UInt32(state.count))
    bytes += state
    bytes.appendLittleEndian(CRC32C.checksum(bytes))
    return bytes
  }

  /// The header at the start of `bytes` and its length, or why there is none.
  package static func decodeHeader(_ bytes: ArraySlice<UInt8>) -> Result<(Header, Int), HeaderProblem> {
    let start = bytes.startIndex
    guard bytes.count >= magic.count + 8 else { return .failure(.short) }
    guard bytes[start..<start + magic.count].elementsEqual(magic) else { return .failure(.damaged) }
    var reader = ByteReader(bytes, from: start + magic.count)
    let version: UInt16 = reader.read()
    let rawKind: UInt16 = reader.read()
    let length = Int(reader.read() as UInt32)
    guard length >= magic.count + 36, length <= maximumHeaderBytes else { return .failure(.damaged) }
    guard bytes.count >= length else { return .failure(.short) }
    var checksumReader = ByteReader(bytes, from: start + length - 4)
    let stored: UInt32 = checksumReader.read()
    guard CRC32C.checksum(bytes[start..<start + length - 4]) == stored, let kind = Kind(rawValue: rawKind) else {
      return .failure(.damaged)
    }
    let schema: Int64 = reader.read()
    let sequence: UInt64 = reader.read()
    guard let action = reader.readString(before: start + length - 4),
      let state = reader.readString(before: start + length - 4)
    else { return .failure(.damaged) }
    let identity = JournalIdentity(actionType: action, stateType: state, schemaVersion: Int(schema))
    return .success((Header(kind: kind, formatVersion: version, identity: identity, sequence: sequence), length))
  }

  /// Appends the frame of the record `sequence`, written at `time`
  /// (nanoseconds since 1970-01-01 UTC), with `body` to `bytes`.
  package static func appendFrame(
    sequence: UInt64, time: Int64, body: some Collection<UInt8>, to bytes: inout [UInt8]
  ) {
    let frameStart = bytes.count
    bytes.appendLittleEndian(UInt32(payloadPrefixBytes + body.count))
    bytes.appendLittleEndian(UInt32(0))  // the checksum, once the payload is in place
    let payloadStart = bytes.count
    bytes.appendLittleEndian(sequence)
    bytes.appendLittleEndian(time)
    bytes.append(contentsOf: body)
    let checksum = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payloadStart...])) }
    withUnsafeBytes(of: checksum.littleEndian) { checksumBytes in
      bytes.replaceSubrange(frameStart + 4..<frameStart + 8, with: checksumBytes)
    }
  }

  /// One frame read from a file.
  package enum Frame: Equatable, Sendable {
    /// A whole frame whose checksum matches: its sequence, its time, its
    /// body's range in the buffer, and where the next frame starts.
    case record(sequence: UInt64, time: Int64, body: Range<Int>, end: Int)
    /// The file ends inside the frame (a write the process or the machine
    /// did not finish).
    case torn
    /// The length is impossible (under a sequence number and a time, or
    /// over the limit).
    case absurdLength(UInt32)
    /// The payload's checksum does not match.
    case checksumMismatch
  }

  /// The frame at `offset` of `bytes` (which must not be at the end).
  package static func decodeFrame(_ bytes: [UInt8], at offset: Int, maximumPayload: Int) -> Frame {
    guard bytes.count - offset >= frameOverhead else { return .torn }
    var reader = ByteReader(bytes[...], from: offset)
    let length: UInt32 = reader.read()
    let checksum: UInt32 = reader.read()
    guard Int(length) >= payloadPrefixBytes, Int(length) <= maximumPayload else { return .absurdLength(length) }
    let payloadStart = offset + frameOverhead
    let end = payloadStart + Int(length)
    guard end <= bytes.count else { return .torn }
    let actual = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payloadStart..<end])) }
    guard actual == checksum else { return .checksumMismatch }
    let sequence: UInt64 = reader.read()
    let time: Int64 = reader.read()
    return .record(sequence: sequence, time: time, body: payloadStart + payloadPrefixBytes..<end, end: end)
  }
}

extension [UInt8] {
  /// Appends `value`'s bytes, least significant first.
  mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
    Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
  }
}

/// Reads little-endian integers from a byte buffer; the caller checked the
/// bounds of the fixed-size part.
struct ByteReader {
  private let bytes: ArraySlice<UInt8>
  private(set) var offset: Int

  init(_ bytes: ArraySlice<UInt8>, from offset: Int) {
    self.bytes = bytes
    self.offset = offset
  }

  mutating func read<T: FixedWidthInteger>() -> T {
    var value = T.zero
    for index in 0..<MemoryLayout<T>.size {
      value |= T(bytes[offset + index]) << (8 * index)
    }
    offset += MemoryLayout<T>.size
    return value
  }

  /// A UInt32-length-prefixed UTF-8 string ending at or before `limit`.
  mutating func readString(before limit: Int) -> String? {
    guard limit - offset >= 4 else { return nil }
    let count = Int(read() as UInt32)
    guard count <= limit - offset else { return nil }
    defer { offset += count }
    return String(validating: bytes[offset..<offset + count], as: UTF8.self)
  }
}
