#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What reading a journal's files cost: the proxy the tests hold memory
/// and reading to.
///
/// `package`: the tests check that recovery keeps no record bodies and
/// that streaming holds one chunk.
package struct JournalReadStatistics: Sendable, Equatable {
  /// Bytes read from files with `pread`.
  package var bytesRead = 0
  /// Bytes of record bodies copied out of the read buffer.
  package var bodyBytesKept = 0
  /// The largest read buffer allocated, in bytes.
  package var largestBuffer = 0

  package init() {}
}

/// One file's frames, front to back, checked in sequence: the single walk
/// over records that recovery, ``JournalRecovery/readRecords(batch:_:)``
/// and ``JournalReader`` share, so that they agree on what is damage.
///
/// The file is read in chunks into one buffer that frames are decoded out
/// of: one `pread` per chunk rather than two per record. The buffer is a
/// chunk long, longer only to hold a frame larger than one; while it is
/// replaced, the old and the new one are both held.
struct FrameScanner {
  enum Step {
    /// A frame that checks out and carries the expected sequence; its body
    /// only when asked for.
    case record(sequence: UInt64, time: Int64, body: [UInt8]?, offset: Int, end: Int)
    /// The frame at `offset` is damaged or out of sequence: the frames
    /// after it cannot be found, their start depends on its length.
    case damage(JournalDamage.Reason, offset: Int)
    /// No frame left: `offset` is the end of the file (or of the limit).
    case end(offset: Int)
  }

  let chunkBytes: Int
  let maximumRecordBytes: Int
  var statistics = JournalReadStatistics()
  /// Where the frames stop: the file's size when started, or the limit given.
  private(set) var size = 0
  /// The file's device and inode, from the `fstat` that sized it.
  private(set) var device: UInt64 = 0
  private(set) var inode: UInt64 = 0
  /// The sequence the next frame must carry.
  private(set) var expected: UInt64 = 0
  private var offset = 0
  private var descriptor: Int32 = -1
  private var path = ""
  /// The file's bytes from `bufferStart`; its count is what was read, so
  /// ``JournalFormat/decodeFrame(_:at:maximumPayload:)`` sees the end of
  /// what is held as the end of the bytes.
  private var buffer: [UInt8] = []
  private var bufferStart = 0

  init(chunkBytes: Int = 1 << 20, maximumRecordBytes: Int) {
    self.chunkBytes = max(chunkBytes, JournalFormat.frameOverhead)
    self.maximumRecordBytes = maximumRecordBytes
  }

  /// Starts on the file at `descriptor`, whose frames begin at `offset`
  /// with the sequence `expected`, and end at its size or at `limit`.
  mutating func start(
    _ descriptor: Int32, path: String, at offset: Int, expecting expected: UInt64, limit: Int = .max
  ) throws(JournalError) {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw .fileSystem(operation: "fstat", path: path, errno: errno) }
    self.descriptor = descriptor
    self.path = path
    self.expected = expected
    self.offset = offset
    size = min(Int(info.st_size), limit)
    device = UInt64(truncatingIfNeeded: info.st_dev)
    inode = UInt64(truncatingIfNeeded: info.st_ino)
    buffer = []
    bufferStart = offset
  }

  /// The next frame, checked against its checksum and the sequence expected.
  mutating func next(keepingBody: Bool) throws(JournalError) -> Step {
    guard offset < size else { return .end(offset: offset) }
    let here = offset
    try hold(from: here, count: JournalFormat.frameOverhead)
    let prefix = here - bufferStart
    guard buffer.count - prefix >= JournalFormat.frameOverhead else { return .damage(.tornRecord, offset: here) }
    let length =
      Int(buffer[prefix]) | Int(buffer[prefix + 1]) << 8 | Int(buffer[prefix + 2]) << 16
      | Int(buffer[prefix + 3]) << 24
    // A length that fits in the file is read whole; a longer one is torn
    // when under the record limit, absurd over it, and either way needs no
    // more bytes than the prefix to say so.
    let fits = size - here - JournalFormat.frameOverhead
    let believable = max(maximumRecordBytes + JournalFormat.payloadPrefixBytes, fits)
    if length <= fits { try hold(from: here, count: JournalFormat.frameOverhead + length) }
    // Holding the whole frame may have moved it to the buffer's start.
    switch JournalFormat.decodeFrame(buffer, at: here - bufferStart, maximumPayload: believable) {
    case .record(let sequence, let time, let body, let end):
      guard sequence == expected else {
        return .damage(.sequenceGap(expected: expected, found: sequence), offset: here)
      }
      expected += 1
      offset = bufferStart + end
      var kept: [UInt8]?
      if keepingBody {
        kept = Array(buffer[body])
        statistics.bodyBytesKept += body.count
      }
      return .record(sequence: sequence, time: time, body: kept, offset: here, end: offset)
    case .torn: return .damage(.tornRecord, offset: here)
    case .absurdLength(let length): return .damage(.absurdLength(length), offset: here)
    case .checksumMismatch: return .damage(.checksumMismatch, offset: here)
    }
  }

  /// Makes the buffer hold the file's `count` bytes at `offset`, or all
  /// up to `size`: when it does not, keeps the bytes from `offset` on and
  /// reads after them to a chunk's worth (or to the frame's end, when
  /// further), into a new buffer: no zero-filling.
  private mutating func hold(from offset: Int, count: Int) throws(JournalError) {
    let wanted = min(offset + count, size)
    guard bufferStart + buffer.count < wanted else { return }
    let skip = offset - bufferStart
    let kept = buffer.count - skip
    // Only the kept tail (usually part of one frame) outlives the old
    // buffer: one chunk is held at a time, not two.
    let old = kept > 0 ? Array(buffer[skip...]) : []
    buffer = []
    let end = min(size, max(wanted, offset + chunkBytes))
    let (descriptor, missing) = (self.descriptor, end - offset - kept)
    var failure: Int32 = 0
    var read = 0
    buffer = [UInt8](unsafeUninitializedCapacity: end - offset) { bytes, initialized in
      let base = bytes.baseAddress!
      if kept > 0 {
        old.withUnsafeBufferPointer { base.initialize(from: $0.baseAddress!, count: kept) }
      }
      while read < missing {
        let result = pread(descriptor, base + kept + read, missing - read, off_t(offset + kept + read))
        if result < 0, errno == EINTR { continue }
        if result < 0 {
          failure = errno
          break
        }
        if result == 0 { break }  // shorter than fstat said: what is there is torn
        read += result
      }
      initialized = kept + read
    }
    statistics.bytesRead += read
    statistics.largestBuffer = max(statistics.largestBuffer, end - offset)
    bufferStart = offset
    guard failure == 0 else { throw .fileSystem(operation: "read", path: path, errno: failure) }
  }
}
