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
/// recovery, and streams: a segment is read a frame at a time, so memory
/// stays at one record whatever the journal's size.
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

  /// The journal's directory.
  package let directory: String
  /// A frame longer than this, or than the rest of its file, is damage.
  package let maximumRecordBytes: Int

  package init(directory: String, maximumRecordBytes: Int = 16 << 20) {
    self.directory = directory
    self.maximumRecordBytes = maximumRecordBytes
  }

  private func path(_ name: String) -> String { directory + "/" + name }

  /// Walks the journal, calling `visit` for each item in order.
  ///
  /// - Throws: ``JournalError/fileSystem(operation:path:errno:)`` when the
  ///   directory or a file cannot be read (not a directory, no permission).
  ///   Damage is never thrown: it is an ``Item/problem(_:)``.
  package func scan(_ visit: (Item) -> Void) throws(JournalError) {
    let names = try FileSystem.names(in: directory)
    let segments = names.compactMap { name in
      JournalFiles.sequence(in: name, prefix: "segment-", suffix: ".log").map { (first: $0, name: name) }
    }.sorted { $0.first < $1.first }
    let snapshots = names.compactMap { name in
      JournalFiles.sequence(in: name, prefix: "snapshot-", suffix: ".snap").map { (sequence: $0, name: name) }
    }.sorted { $0.sequence < $1.sequence }
    guard !segments.isEmpty || !snapshots.isEmpty else {
      visit(.problem(JournalProblem(path: directory, offset: 0, reason: .notAJournal)))
      return
    }

    var identity: JournalIdentity?
    var newestSnapshot: UInt64?
    for snapshot in snapshots {
      let file = path(snapshot.name)
      guard
        let (descriptor, headerLength) = try openChecked(
          file, kind: .snapshot, sequence: snapshot.sequence,
          identity: &identity, visit)
      else { continue }
      defer { systemClose(descriptor) }
      let size = try FileSystem.size(of: descriptor, path: file)
      switch try readFrame(descriptor, path: file, at: headerLength, size: size) {
      case .record(let record)
      where record.sequence == snapshot.sequence
        && headerLength + JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes + record.body.count == size:
        newestSnapshot = snapshot.sequence
        visit(.snapshot(path: file, sequence: snapshot.sequence, stateBytes: record.body.count))
      default:
        visit(.problem(JournalProblem(path: file, offset: headerLength, reason: .damagedSnapshot)))
      }
    }

    var expected: UInt64?
    for segment in segments {
      let file = path(segment.name)
      if expected == nil, segment.first > (newestSnapshot ?? 0) + 1 {
        visit(.problem(JournalProblem(path: file, offset: 0, reason: .missingRecords(after: newestSnapshot ?? 0))))
      }
      if let expected, segment.first != expected {
        visit(
          .problem(
            JournalProblem(
              path: file, offset: 0, reason: .record(.sequenceGap(expected: expected, found: segment.first)))))
      }
      expected = segment.first
      guard
        let (descriptor, headerLength) = try openChecked(
          file, kind: .segment, sequence: segment.first,
          identity: &identity, visit)
      else { continue }
      defer { systemClose(descriptor) }
      visit(.segment(path: file, first: segment.first))
      let size = try FileSystem.size(of: descriptor, path: file)
      var offset = headerLength
      frames: while offset < size {
        switch try readFrame(descriptor, path: file, at: offset, size: size) {
        case .record(let record):
          guard record.sequence == expected else {
            visit(
              .problem(
                JournalProblem(
                  path: file, offset: offset,
                  reason: .record(.sequenceGap(expected: expected ?? 0, found: record.sequence)))))
            break frames
          }
          visit(.record(record, path: file, offset: offset))
          expected = record.sequence + 1
          offset += JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes + record.body.count
        case .damage(let reason):
          // The frames after a damaged one cannot be found: their start
          // depends on its length. The next segment starts afresh.
          visit(.problem(JournalProblem(path: file, offset: offset, reason: .record(reason))))
          break frames
        }
      }
    }
  }

  /// Opens `file` and checks its header: readable, this format version,
  /// the expected kind and sequence, the journal's identity (the first
  /// header read sets it). On a problem, reports it and returns `nil`.
  private func openChecked(
    _ file: String, kind: JournalFormat.Kind, sequence: UInt64, identity: inout JournalIdentity?,
    _ visit: (Item) -> Void
  ) throws(JournalError) -> (Int32, Int)? {
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
        return (descriptor, length)
      }
    }
    systemClose(descriptor)
    visit(.problem(JournalProblem(path: file, offset: 0, reason: reason)))
    return nil
  }

  private enum ReadFrame {
    case record(JournalRecord)
    case damage(JournalDamage.Reason)
  }

  /// The frame at `offset`: its length and checksum first, then its payload
  /// (only when the length is believable), decoded by
  /// ``JournalFormat/decodeFrame(_:at:maximumPayload:)``.
  private func readFrame(_ descriptor: Int32, path file: String, at offset: Int, size: Int) throws(JournalError)
    -> ReadFrame
  {
    let prefix = try FileSystem.read(descriptor, path: file, at: offset, count: JournalFormat.frameOverhead)
    guard prefix.count == JournalFormat.frameOverhead else { return .damage(.tornRecord) }
    let length = Int(prefix[0]) | Int(prefix[1]) << 8 | Int(prefix[2]) << 16 | Int(prefix[3]) << 24
    // As recovery: a length that fits in the file is read whole; a longer
    // one is torn when under the record limit, absurd over it.
    let fits = size - offset - JournalFormat.frameOverhead
    let believable = max(maximumRecordBytes + JournalFormat.payloadPrefixBytes, fits)
    let count = JournalFormat.frameOverhead + min(length, fits)
    let bytes = length <= believable ? try FileSystem.read(descriptor, path: file, at: offset, count: count) : prefix
    switch JournalFormat.decodeFrame(bytes, at: 0, maximumPayload: believable) {
    case .record(let sequence, let time, let body, _):
      return .record(JournalRecord(sequence: sequence, body: Array(bytes[body]), time: time))
    case .torn: return .damage(.tornRecord)
    case .absurdLength(let length): return .damage(.absurdLength(length))
    case .checksumMismatch: return .damage(.checksumMismatch)
    }
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

extension FileSystem {
  /// Up to `count` bytes at `offset` (fewer at the end of the file).
  static func read(_ descriptor: Int32, path: String, at offset: Int, count: Int) throws(JournalError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    var failure: Int32 = 0
    bytes.withUnsafeMutableBytes { buffer in
      while done < count {
        let result = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
        if result < 0, errno == EINTR { continue }
        if result < 0 {
          failure = errno
          return
        }
        if result == 0 { return }
        done += result
      }
    }
    guard failure == 0 else { throw .fileSystem(operation: "read", path: path, errno: failure) }
    return done == count ? bytes : Array(bytes[..<done])
  }
}
