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
/// moved aside or cut. It walks the frames with the same ``FrameScanner``
/// as recovery, and reports problems in the same words
/// (``JournalDamage/Reason``); a file is read in chunks of ``chunkBytes``,
/// so memory stays at one chunk (or one frame, when a frame is larger)
/// whatever the journal's size.
///
/// It does not know the journal's types: the first readable header names
/// them, and a file whose header names others is a problem.
///
/// `package`: the `asynccore-inspect` executable and the tests use it.
package struct JournalReader {
  /// One thing found in the journal, in file order: snapshots first (oldest
  /// first), then the segments' records.
  package enum Item: Equatable, Sendable {
    /// A snapshot that reads back whole: the sequence it covers through and its state.
    case snapshot(path: String, sequence: UInt64, state: [UInt8])
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

  /// Called after each listing of the directory, before its files are
  /// opened: where a test changes the directory as a live writer would.
  package var afterListing: (() -> Void)?

  package init(directory: String, maximumRecordBytes: Int = 16 << 20, chunkBytes: Int = 1 << 20) {
    self.directory = directory
    self.maximumRecordBytes = maximumRecordBytes
    self.chunkBytes = max(chunkBytes, JournalFormat.frameOverhead)
  }

  private func path(_ name: String) -> String { directory + "/" + name }

  /// Walks the journal, calling `visit` for each item in order, until
  /// `visit` returns ``ScanControl/stop`` or the journal ends.
  ///
  /// Every file listed is opened before the first item, so a file a live
  /// writer removes afterwards (rotation) is still read whole. One that
  /// goes between the listing and its opening makes the scan list the
  /// directory again, up to ``listingAttempts`` times; past them the only
  /// item is a ``JournalDamage/Reason/changing(attempts:)`` problem.
  ///
  /// After a stop nothing more is read: a later file's damage, or a file
  /// that cannot be read, is neither reported nor thrown.
  ///
  /// - Throws: ``JournalError/fileSystem(operation:path:errno:)`` when the
  ///   directory or a file cannot be read (not a directory, no permission).
  ///   Damage is never thrown: it is an ``Item/problem(_:)``.
  package func scan(_ visit: (Item) -> ScanControl) throws(JournalError) {
    guard let listing = try openListing() else {
      _ = visit(.problem(JournalProblem(path: directory, offset: 0, reason: .changing(attempts: listingAttempts))))
      return
    }
    defer { listing.close() }
    let (segments, snapshots) = (listing.segments, listing.snapshots)
    guard !segments.isEmpty || !snapshots.isEmpty else {
      _ = visit(.problem(JournalProblem(path: directory, offset: 0, reason: .notAJournal)))
      return
    }

    var scanner = FrameScanner(chunkBytes: chunkBytes, maximumRecordBytes: maximumRecordBytes)
    var identity: JournalIdentity?
    var newestSnapshot: UInt64?
    for snapshot in snapshots {
      let file = path(snapshot.name)
      let descriptor = try snapshot.descriptor.get()
      let headerLength: Int
      switch try checkHeader(descriptor, file, kind: .snapshot, sequence: snapshot.first, identity: &identity) {
      case .problem(let problem):
        guard visit(.problem(problem)) == .proceed else { return }
        continue
      case .checked(let length):
        headerLength = length
      }
      try scanner.start(descriptor, path: file, at: headerLength, expecting: snapshot.first)
      let item: Item
      switch try scanner.next(keepingBody: true) {
      case .record(_, _, let state?, _, let end) where end == scanner.size:
        newestSnapshot = snapshot.first
        item = .snapshot(path: file, sequence: snapshot.first, state: state)
      default:
        item = .problem(JournalProblem(path: file, offset: headerLength, reason: .damagedSnapshot))
      }
      guard visit(item) == .proceed else { return }
    }

    var expected: UInt64?
    var lastReadWhole = false
    for segment in segments {
      lastReadWhole = false
      let file = path(segment.name)
      if expected == nil, segment.first > (newestSnapshot ?? 0) + 1 {
        let problem = JournalProblem(path: file, offset: 0, reason: .missingRecords(after: newestSnapshot ?? 0))
        guard visit(.problem(problem)) == .proceed else { return }
      }
      if let expected, segment.first != expected {
        let problem = JournalProblem(
          path: file, offset: 0, reason: .sequenceGap(expected: expected, found: segment.first))
        guard visit(.problem(problem)) == .proceed else { return }
      }
      expected = segment.first
      let descriptor = try segment.descriptor.get()
      let headerLength: Int
      switch try checkHeader(descriptor, file, kind: .segment, sequence: segment.first, identity: &identity) {
      case .problem(let problem):
        guard visit(.problem(problem)) == .proceed else { return }
        continue
      case .checked(let length):
        headerLength = length
      }
      guard visit(.segment(path: file, first: segment.first)) == .proceed else { return }
      try scanner.start(descriptor, path: file, at: headerLength, expecting: segment.first)
      lastReadWhole = true
      frames: while true {
        switch try scanner.next(keepingBody: true) {
        case .record(let sequence, let time, let body, let offset, _):
          expected = sequence + 1
          let record = JournalRecord(sequence: sequence, body: body ?? [], time: time)
          guard visit(.record(record, path: file, offset: offset)) == .proceed else { return }
        case .end:
          break frames
        case .damage(let reason, let offset):
          // The newest segment cut inside a record that has grown since it
          // was sized: a live writer's append, not damage. The view ends before it.
          if reason == .tornRecord, segment.first == segments.last?.first,
            (try? FileSystem.size(of: descriptor, path: file)).map({ $0 > scanner.size }) == true
          {
            break frames
          }
          // The next segment starts afresh.
          lastReadWhole = false
          guard visit(.problem(JournalProblem(path: file, offset: offset, reason: reason))) == .proceed else { return }
          break frames
        }
      }
    }

    // A writer starts a segment at S + 1 as it writes snapshot S over a
    // segment that holds records; recovery cannot know of one deleted since.
    if let newest = newestSnapshot, segments.last.map({ $0.first <= newest && lastReadWhole }) ?? true,
      (expected ?? 0) <= newest + 1, (try? listNames()) == listing.names
    {
      let missing = path(JournalFiles.segment(newest + 1))
      _ = visit(.problem(JournalProblem(path: missing, offset: 0, reason: .missingSegment(after: newest))))
    }
  }

  /// How many times ``scan(_:)`` lists the directory when files listed
  /// vanish before they are opened.
  package var listingAttempts: Int { 10 }

  /// The journal's files, each opened (or why it could not be), in order:
  /// segments by first sequence, snapshots by sequence.
  private struct Listing {
    struct File {
      var first: UInt64
      var name: String
      var descriptor: Result<Int32, JournalError>
    }
    var names: [String]
    var segments: [File]
    var snapshots: [File]

    func close() {
      for file in segments + snapshots {
        if case .success(let descriptor) = file.descriptor { systemClose(descriptor) }
      }
    }
  }

  /// The names of the journal's segments and snapshots, sorted.
  private func listNames() throws(JournalError) -> [String] {
    try FileSystem.names(in: directory).filter { name in
      JournalFiles.sequence(in: name, prefix: "segment-", suffix: ".log") != nil
        || JournalFiles.sequence(in: name, prefix: "snapshot-", suffix: ".snap") != nil
    }.sorted()
  }

  /// Lists the directory and opens every file; lists again when one
  /// vanished in between (`ENOENT`). `nil` when that happened at every
  /// attempt. An open that fails otherwise is kept, to be thrown when the
  /// scan reaches its file.
  private func openListing() throws(JournalError) -> Listing? {
    for _ in 0..<listingAttempts {
      let names = try listNames()
      afterListing?()
      func open(_ prefix: String, _ suffix: String) -> [Listing.File] {
        names.compactMap { name in
          JournalFiles.sequence(in: name, prefix: prefix, suffix: suffix).map { first in
            Listing.File(
              first: first, name: name,
              descriptor: Result { () throws(JournalError) in
                try FileSystem.open(path(name), O_RDONLY)
              })
          }
        }.sorted { $0.first < $1.first }
      }
      let listing = Listing(names: names, segments: open("segment-", ".log"), snapshots: open("snapshot-", ".snap"))
      let vanished = (listing.segments + listing.snapshots).contains { file in
        if case .failure(.fileSystem(_, _, ENOENT)) = file.descriptor { true } else { false }
      }
      guard vanished else { return listing }
      listing.close()
    }
    return nil
  }

  private enum Checked {
    /// The header's length.
    case checked(Int)
    case problem(JournalProblem)
  }

  /// Checks the header of `file`: readable, this format version, the
  /// expected kind and sequence, the journal's identity (the first header
  /// read sets it).
  private func checkHeader(
    _ descriptor: Int32, _ file: String, kind: JournalFormat.Kind, sequence: UInt64, identity: inout JournalIdentity?
  ) throws(JournalError) -> Checked {
    let bytes = try FileSystem.read(descriptor, path: file, limit: JournalFormat.maximumHeaderBytes)
    let reason: JournalDamage.Reason
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
        return .checked(length)
      }
    }
    return .problem(JournalProblem(path: file, offset: 0, reason: reason))
  }
}
