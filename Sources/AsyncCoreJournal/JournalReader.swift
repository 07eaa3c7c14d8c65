import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A read-only walk over a journal's files, for the inspector: every
/// header, snapshot and record, and every problem by its file and offset.
///
/// Unlike ``Journal/open(directory:identity:durability:maximumRecordBytes:)``
/// it never writes: no directory is made, no lock is taken, nothing is
/// moved aside or cut. It decodes with the same ``JournalFormat`` as
/// recovery, and streams: a file is read in chunks of ``chunkBytes`` into
/// one buffer that frames are decoded out of, so memory stays at one chunk
/// (or one frame, when a frame is larger) whatever the journal's size.
///
/// It does not know the journal's types: the first readable header names
/// them, and a file whose header names others is a problem.
///
/// `package`: the `asynccore-inspect` executable and the tests use it.
package struct JournalReader {
  /// One thing found in the journal, in file order: snapshots first (oldest
  /// first), then the segments' records.
  package enum Item: Equatable, Sendable {
    /// A snapshot that reads back whole: the sequence it covers through and its state's size.
    case snapshot(path: String, sequence: UInt64, stateBytes: Int)
    /// A segment's header read; its records follow.
    case segment(path: String, first: UInt64)
    /// A record whose frame checks out, at `offset` of the segment at
    /// `path`, with its time (``JournalRecord/time``).
    case record(JournalRecord, path: String, offset: Int)
    /// Something wrong.
    case problem(JournalProblem)
  }

  /// What a visitor of ``scan(_:)`` wants next.
  package enum ScanControl: Equatable, Sendable {
    /// The next item.
    case proceed
    /// Nothing more: the scan returns without reading further.
    case stop
  }

  /// The journal's directory.
  package let directory: String
  /// A frame longer than this, or than the rest of its file, is damage.
  package let maximumRecordBytes: Int
  /// How much of a file one read asks for (more only for a frame larger than this).
  package let chunkBytes: Int

  package init(directory: String, maximumRecordBytes: Int = 16 << 20, chunkBytes: Int = 1 << 20) {
    self.directory = directory
    self.maximumRecordBytes = maximumRecordBytes
    self.chunkBytes = max(chunkBytes, JournalFormat.frameOverhead)
  }

  private func path(_ name: String) -> String { directory + "/" + name }

  /// Walks the journal, calling `visit` for each item in order, until
  /// `visit` returns ``ScanControl/stop`` or the journal ends.
  ///
  /// After a stop nothing more is read: a later file's damage, or a file
  /// that cannot be read, is neither reported nor thrown.
  ///
  /// - Throws: ``JournalError/fileSystem(operation:path:errno:)`` when the
  ///   directory or a file cannot be read (not a directory, no permission).
  ///   Damage is never thrown: it is an ``Item/problem(_:)``.
  package func scan(_ visit: (Item) -> ScanControl) throws(JournalError) {
    let names = try FileSystem.names(in: directory)
    let segments = names.compactMap { name in
      JournalFiles.sequence(in: name, prefix: "segment-", suffix: ".log").map { (first: $0, name: name) }
    }.sorted { $0.first < $1.first }
    let snapshots = names.compactMap { name in
      JournalFiles.sequence(in: name, prefix: "snapshot-", suffix: ".snap").map { (sequence: $0, name: name) }
    }.sorted { $0.sequence < $1.sequence }
    guard !segments.isEmpty || !snapshots.isEmpty else {
      _ = visit(.problem(JournalProblem(path: directory, offset: 0, reason: .notAJournal)))
      return
    }

    var frameBuffer = FrameBuffer(chunkBytes: chunkBytes, maximumRecordBytes: maximumRecordBytes)
    var identity: JournalIdentity?
    var newestSnapshot: UInt64?
    for snapshot in snapshots {
      let file = path(snapshot.name)
      let descriptor: Int32
      let headerLength: Int
      switch try openChecked(file, kind: .snapshot, sequence: snapshot.sequence, identity: &identity) {
      case .problem(let problem):
        guard visit(.problem(problem)) == .proceed else { return }
        continue
      case .opened(let opened, let length):
        (descriptor, headerLength) = (opened, length)
      }
      defer { systemClose(descriptor) }
      try frameBuffer.start(descriptor, path: file, at: headerLength)
      let item: Item
      switch try frameBuffer.frame(at: headerLength) {
      case .record(let record, let end) where record.sequence == snapshot.sequence && end == frameBuffer.size:
        newestSnapshot = snapshot.sequence
        item = .snapshot(path: file, sequence: snapshot.sequence, stateBytes: record.body.count)
      default:
        item = .problem(JournalProblem(path: file, offset: headerLength, reason: .damagedSnapshot))
      }
      guard visit(item) == .proceed else { return }
    }

    var expected: UInt64?
    for segment in segments {
      let file = path(segment.name)
      if expected == nil, segment.first > (newestSnapshot ?? 0) + 1 {
        let problem = JournalProblem(path: file, offset: 0, reason: .missingRecords(after: newestSnapshot ?? 0))
        guard visit(.problem(problem)) == .proceed else { return }
      }
      if let expected, segment.first != expected {
        let problem = JournalProblem(
          path: file, offset: 0, reason: .record(.sequenceGap(expected: expected, found: segment.first)))
        guard visit(.problem(problem)) == .proceed else { return }
      }
      expected = segment.first
      let descriptor: Int32
      let headerLength: Int
      switch try openChecked(file, kind: .segment, sequence: segment.first, identity: &identity) {
      case .problem(let problem):
        guard visit(.problem(problem)) == .proceed else { return }
        continue
      case .opened(let opened, let length):
        (descriptor, headerLength) = (opened, length)
      }
      defer { systemClose(descriptor) }
      guard visit(.segment(path: file, first: segment.first)) == .proceed else { return }
      try frameBuffer.start(descriptor, path: file, at: headerLength)
      var offset = headerLength
      frames: while offset < frameBuffer.size {
        let item: Item
        switch try frameBuffer.frame(at: offset) {
        case .record(let record, let end):
          guard record.sequence == expected else {
            let problem = JournalProblem(
              path: file, offset: offset,
              reason: .record(.sequenceGap(expected: expected ?? 0, found: record.sequence)))
            guard visit(.problem(problem)) == .proceed else { return }
            break frames
          }
          item = .record(record, path: file, offset: offset)
          expected = record.sequence + 1
          offset = end
        case .damage(let reason):
          // The frames after a damaged one cannot be found: their start
          // depends on its length. The next segment starts afresh.
          guard visit(.problem(JournalProblem(path: file, offset: offset, reason: .record(reason)))) == .proceed
          else { return }
          break frames
        }
        guard visit(item) == .proceed else { return }
      }
    }
  }

  private enum Opened {
    /// The file's descriptor and its header's length.
    case opened(Int32, Int)
    case problem(JournalProblem)
  }

  /// Opens `file` and checks its header: readable, this format version,
  /// the expected kind and sequence, the journal's identity (the first
  /// header read sets it). On a problem, closes it and returns the problem.
  private func openChecked(
    _ file: String, kind: JournalFormat.Kind, sequence: UInt64, identity: inout JournalIdentity?
  ) throws(JournalError) -> Opened {
    let descriptor = try FileSystem.open(file, O_RDONLY)
    let bytes: [UInt8]
    do { bytes = try FileSystem.read(descriptor, path: file, limit: JournalFormat.maximumHeaderBytes) } catch {
      systemClose(descriptor)
      throw error
    }
    let reason: JournalProblem.Reason
    switch JournalFormat.decodeHeader(bytes[...]) {
    case .failure:
      reason = .damagedHeader
    case .success(let (header, length)):
      if header.formatVersion != JournalFormat.version {
        reason = .unsupportedFormat(header.formatVersion)
      } else if header.kind != kind {
        reason = .damagedHeader
      } else if header.sequence != sequence {
        reason = .headerSequence(named: sequence, found: header.sequence)
      } else if let identity, identity != header.identity {
        reason = .identityDiffers(expected: identity, found: header.identity)
      } else {
        identity = header.identity
        return .opened(descriptor, length)
      }
    }
    systemClose(descriptor)
    return .problem(JournalProblem(path: file, offset: 0, reason: reason))
  }
}

/// One file's bytes, read front to back in chunks into one buffer that
/// frames are decoded out of: one `pread` per chunk rather than two per
/// record.
///
/// The buffer holds the file's bytes from `bufferStart` on, never past
/// `size` (the size when the file was opened, as the reader's loop uses).
/// It is a chunk long, longer only to hold a frame larger than one; while
/// it is replaced, the old and the new one are both held.
private struct FrameBuffer {
  enum ReadFrame {
    /// A frame that checks out, and where the next one starts.
    case record(JournalRecord, end: Int)
    case damage(JournalDamage.Reason)
  }

  let chunkBytes: Int
  let maximumRecordBytes: Int
  private(set) var size = 0
  private var descriptor: Int32 = -1
  private var path = ""
  /// The file's bytes from `bufferStart`; its count is what was read, so
  /// ``JournalFormat/decodeFrame(_:at:maximumPayload:)`` sees the end of
  /// what is held as the end of the bytes.
  private var buffer: [UInt8] = []
  private var bufferStart = 0

  init(chunkBytes: Int, maximumRecordBytes: Int) {
    self.chunkBytes = chunkBytes
    self.maximumRecordBytes = maximumRecordBytes
  }

  /// Starts on the file at `descriptor`, whose frames begin at `offset`.
  mutating func start(_ descriptor: Int32, path: String, at offset: Int) throws(JournalError) {
    self.descriptor = descriptor
    self.path = path
    size = try FileSystem.size(of: descriptor, path: path)
    buffer = []
    bufferStart = offset
  }

  /// The frame at `offset` (at or after the previous frame's), decoded by
  /// ``JournalFormat/decodeFrame(_:at:maximumPayload:)`` with recovery's
  /// rule for a believable length.
  mutating func frame(at offset: Int) throws(JournalError) -> ReadFrame {
    try hold(from: offset, count: JournalFormat.frameOverhead)
    let prefix = offset - bufferStart
    guard buffer.count - prefix >= JournalFormat.frameOverhead else { return .damage(.tornRecord) }
    let length =
      Int(buffer[prefix]) | Int(buffer[prefix + 1]) << 8 | Int(buffer[prefix + 2]) << 16
      | Int(buffer[prefix + 3]) << 24
    // As recovery: a length that fits in the file is read whole; a longer
    // one is torn when under the record limit, absurd over it, and either
    // way needs no more bytes than the prefix to say so.
    let fits = size - offset - JournalFormat.frameOverhead
    let believable = max(maximumRecordBytes + JournalFormat.payloadPrefixBytes, fits)
    if length <= fits { try hold(from: offset, count: JournalFormat.frameOverhead + length) }
    // Holding the whole frame may have moved it to the buffer's start.
    let index = offset - bufferStart
    switch JournalFormat.decodeFrame(buffer, at: index, maximumPayload: believable) {
    case .record(let sequence, let time, let body, let end):
      return .record(JournalRecord(sequence: sequence, body: Array(buffer[body]), time: time), end: bufferStart + end)
    case .torn: return .damage(.tornRecord)
    case .absurdLength(let length): return .damage(.absurdLength(length))
    case .checksumMismatch: return .damage(.checksumMismatch)
    }
  }

  /// Makes the buffer hold the file's `count` bytes at `offset`, or all
  /// up to `size`: when it does not, keeps the bytes from `offset` on and
  /// reads after them to a chunk's worth (or to the frame's end, when
  /// further), into a new buffer: one allocation per chunk, and no byte
  /// written twice (no zero-filling, no moving the kept bytes down).
  private mutating func hold(from offset: Int, count: Int) throws(JournalError) {
    let wanted = min(offset + count, size)
    guard bufferStart + buffer.count < wanted else { return }
    let old = buffer
    let skip = offset - bufferStart
    let kept = old.count - skip
    let end = min(size, max(wanted, offset + chunkBytes))
    let (descriptor, missing) = (self.descriptor, end - offset - kept)
    var failure: Int32 = 0
    buffer = [UInt8](unsafeUninitializedCapacity: end - offset) { bytes, initialized in
      let base = bytes.baseAddress!
      if kept > 0 {
        old.withUnsafeBufferPointer { base.initialize(from: $0.baseAddress! + skip, count: kept) }
      }
      var done = 0
      while done < missing {
        let result = pread(descriptor, base + kept + done, missing - done, off_t(offset + kept + done))
        if result < 0, errno == EINTR { continue }
        if result < 0 {
          failure = errno
          break
        }
        if result == 0 { break }  // shorter than fstat said: what is there is torn
        done += result
      }
      initialized = kept + done
    }
    bufferStart = offset
    guard failure == 0 else { throw .fileSystem(operation: "read", path: path, errno: failure) }
  }
}

/// A problem ``JournalReader`` found: the file, the offset in it, and why.
package struct JournalProblem: Equatable, Sendable, CustomStringConvertible {
  package enum Reason: Equatable, Sendable {
    /// A segment's record (or the segment itself, at offset 0) is damaged
    /// or out of sequence, as recovery would report it.
    case record(JournalDamage.Reason)
    /// The header is short, fails its checksum, or is of the other kind.
    case damagedHeader
    /// The header is of another format version.
    case unsupportedFormat(UInt16)
    /// The header's sequence is not the one in the file's name.
    case headerSequence(named: UInt64, found: UInt64)
    /// The header names other types or another schema than the journal's first file.
    case identityDiffers(expected: JournalIdentity, found: JournalIdentity)
    /// A snapshot whose state does not read back whole.
    case damagedSnapshot
    /// The oldest segment starts after the record that follows the newest snapshot.
    case missingRecords(after: UInt64)
    /// The directory holds no segment and no snapshot.
    case notAJournal
  }

  package var path: String
  package var offset: Int
  package var reason: Reason

  package init(path: String, offset: Int, reason: Reason) {
    self.path = path
    self.offset = offset
    self.reason = reason
  }

  package var description: String {
    let what =
      switch reason {
      case .record(.tornRecord): "the file ends inside a record (a write that did not finish)"
      case .record(.checksumMismatch): "a record's checksum does not match its bytes"
      case .record(.absurdLength(let length)): "a record's length, \(length), is impossible"
      case .record(.sequenceGap(let expected, let found)): "expected record \(expected), found \(found)"
      case .record(let other): "\(other)"
      case .damagedHeader: "the header is damaged or not a journal header"
      case .unsupportedFormat(let version):
        "journal format \(version), which this version (format \(JournalFormat.version)) does not read"
      case .headerSequence(let named, let found): "the header says sequence \(found), the name \(named)"
      case .identityDiffers(let expected, let found): "written for \(found), not \(expected) as the first file"
      case .damagedSnapshot: "the snapshot does not read back whole"
      case .missingRecords(let after): "records after \(after) are missing"
      case .notAJournal: "not a journal: no segment-….log or snapshot-….snap file"
      }
    return "\(logSafe(path)) at offset \(offset): \(what)"
  }
}
