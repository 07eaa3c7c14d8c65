import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension Journal {
  /// Opens the journal in `directory` (made if missing), locks it, and
  /// recovers it: the newest snapshot that reads back, the records after
  /// it, and a report of any damage, which is moved aside.
  ///
  /// ```swift
  /// let identity = JournalIdentity(action: OrderAction.self, state: Orders.self, schemaVersion: 1)
  /// let (journal, recovered) = try Journal.open(directory: "orders.journal", identity: identity, durability: .everyAction)
  /// var state = try recovered.snapshot.map { try codec.decode(Orders.self, from: $0.state) } ?? Orders()
  /// try recovered.readRecords(batch: 1_000) { records in
  ///   for record in records { reduce(&state, try codec.decode(OrderAction.self, from: record.body)) }
  /// }
  /// ```
  ///
  /// Recovery reads every segment's records in order, checking each and
  /// keeping none (``JournalRecovery/readRecords(batch:_:)`` reads them
  /// again, before the first append), and stops at the
  /// first that is torn (the file ends inside it), fails its checksum, has
  /// an impossible length or an unexpected sequence number. From there on
  /// the bytes are copied to a sibling file named after the offset
  /// (`segment-….log.aside-at-<offset>`, synced), then the segment is cut
  /// at the last whole record; later segments are renamed aside whole.
  /// Nothing is deleted. A snapshot that does not read back is renamed
  /// aside and recovery uses the previous one, or starts from the first
  /// record; when the records that would follow are gone too, this throws
  /// ``JournalError/missingRecords(after:path:damagedSnapshots:)``, which
  /// lists the snapshots moved aside.
  ///
  /// - Important: Every header is checked before anything is changed: a
  ///   journal for other types or another schema version is refused
  ///   (``JournalError/incompatible(path:expected:found:)``), never reset.
  /// - Parameters:
  ///   - directory: The journal's directory, made (mode 0755, less the umask) if missing.
  ///     Its parent must exist: when it does not, this throws
  ///     ``JournalError/fileSystem(operation:path:errno:)`` with `"mkdir"`
  ///     and `ENOENT`, and makes nothing.
  ///   - identity: The action and state types and the schema version; every
  ///     existing file's header must carry the same.
  ///   - durability: When appended records are synced.
  ///   - maximumRecordBytes: The longest record body ``append(_:)``
  ///     accepts. Recovery reads a longer record whole when its length
  ///     fits in the file and its checksum holds (a journal written under
  ///     a larger limit); a longer length that does not fit is damage.
  /// - Throws: ``JournalError/locked(path:)``,
  ///   ``JournalError/incompatible(path:expected:found:)``,
  ///   ``JournalError/unsupportedFormat(path:version:)``,
  ///   ``JournalError/missingRecords(after:path:damagedSnapshots:)``,
  ///   ``JournalError/fileSystem(operation:path:errno:)``.
  package static func open(
    directory: String, identity: JournalIdentity, durability: JournalDurability,
    maximumRecordBytes: Int = 16 << 20
  ) throws(JournalError) -> (journal: Journal, recovered: JournalRecovery) {
    if maximumRecordBytes < 0 || maximumRecordBytes > Int(UInt32.max) - JournalFormat.payloadPrefixBytes {
      programmerError(
        "Journal.open: maximumRecordBytes \(maximumRecordBytes) is not in 0...\(Int(UInt32.max) - JournalFormat.payloadPrefixBytes)"
      )
    }
    let opened = try JournalDirectory.open(directory)
    guard flock(opened.descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let error = errno
      systemClose(opened.descriptor)
      if error == EWOULDBLOCK { throw .locked(path: directory) }
      throw .fileSystem(operation: "flock", path: directory, errno: error)
    }
    do {
      var recoverer = Recoverer(directory: opened, identity: identity, maximumRecordBytes: maximumRecordBytes)
      let (found, state) = try recoverer.run(durability: durability)
      let journal = Journal(
        identity: identity, maximumRecordBytes: maximumRecordBytes, directory: opened, state: state)
      let files = JournalRecordFiles(journal: journal, spans: found.spans, maximumRecordBytes: maximumRecordBytes)
      let recovered = JournalRecovery(
        snapshot: found.snapshot, damage: recoverer.damage, files: files, statistics: recoverer.scanner.statistics)
      return (journal, recovered)
    } catch {
      systemClose(opened.descriptor)  // releases the lock
      throw error
    }
  }
}

/// The names of a journal's files.
enum JournalFiles {
  static func segment(_ first: UInt64) -> String { "segment-\(padded(first)).log" }
  static func snapshot(_ sequence: UInt64) -> String { "snapshot-\(padded(sequence)).snap" }

  /// The sequence in a segment's or a snapshot's name, if `name` is one.
  static func sequence(in name: String, prefix: String, suffix: String) -> UInt64? {
    guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + 20 + suffix.count else {
      return nil
    }
    return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count))
  }

  /// Twenty digits, so that names sort as the numbers do.
  private static func padded(_ value: UInt64) -> String {
    let digits = String(value)
    return String(repeating: "0", count: 20 - digits.count) + digits
  }
}

/// Opening a journal: check every header, pick the snapshot, read the
/// records, move damage aside, and open the segment to append to.
struct Recoverer {
  let directory: JournalDirectory
  let identity: JournalIdentity
  let maximumRecordBytes: Int
  var damage: [JournalDamage] = []
  /// Reads every segment a chunk at a time, keeping no record body.
  var scanner: FrameScanner

  init(directory: JournalDirectory, identity: JournalIdentity, maximumRecordBytes: Int) {
    self.directory = directory
    self.identity = identity
    self.maximumRecordBytes = maximumRecordBytes
    self.scanner = FrameScanner(maximumRecordBytes: maximumRecordBytes)
  }

  func path(_ name: String) -> String { directory.path(name) }

  /// A file's header, checked against the journal's identity; `nil` when
  /// damaged. Reads only the header's bytes.
  func header(of name: String, kind: JournalFormat.Kind) throws(JournalError) -> (JournalFormat.Header, Int)? {
    let descriptor = try directory.open(name, O_RDONLY)
    defer { systemClose(descriptor) }
    let bytes = try FileSystem.read(descriptor, path: path(name), limit: JournalFormat.maximumHeaderBytes)
    guard case .success(let (header, length)) = JournalFormat.decodeHeader(bytes[...]) else { return nil }
    guard header.formatVersion == JournalFormat.version else {
      throw .unsupportedFormat(path: path(name), version: Int(header.formatVersion))
    }
    guard header.identity == identity else {
      throw .incompatible(path: path(name), expected: identity, found: header.identity)
    }
    return header.kind == kind ? (header, length) : nil
  }

  /// What ``run(durability:)`` found: the snapshot, and where the records after it are.
  struct Found {
    var snapshot: JournalSnapshot?
    var spans: [JournalRecordFiles.Span]
  }

  mutating func run(durability: JournalDurability) throws(JournalError) -> (Found, JournalState) {
    let names = try directory.names()
    var segments = names.compactMap { name in
      JournalFiles.sequence(in: name, prefix: "segment-", suffix: ".log").map { (first: $0, name: name) }
    }.sorted { $0.first < $1.first }
    let snapshotFiles = names.compactMap { name in
      JournalFiles.sequence(in: name, prefix: "snapshot-", suffix: ".snap").map { (sequence: $0, name: name) }
    }.sorted { $0.sequence < $1.sequence }

    // 1. Every header first: refuse before changing anything.
    var segmentHeaders: [String: Int] = [:]  // name → header length, for the readable ones
    for segment in segments {
      if let (header, length) = try header(of: segment.name, kind: .segment), header.sequence == segment.first {
        segmentHeaders[segment.name] = length
      }
    }
    var snapshotHeaders: [String: Int] = [:]
    for snapshot in snapshotFiles {
      if let (header, length) = try header(of: snapshot.name, kind: .snapshot), header.sequence == snapshot.sequence {
        snapshotHeaders[snapshot.name] = length
      }
    }

    // 2. The newest snapshot that reads back whole; the damaged ones after it are renamed aside.
    var chosen: JournalSnapshot?
    var validSnapshots: [UInt64] = []
    for snapshot in snapshotFiles.reversed() {
      if chosen == nil {
        if let state = try readSnapshot(
          snapshot.name, sequence: snapshot.sequence, headerLength: snapshotHeaders[snapshot.name])
        {
          chosen = JournalSnapshot(sequence: snapshot.sequence, state: state)
          validSnapshots.append(snapshot.sequence)
        } else {
          try moveAside(snapshot.name, from: 0, reason: .damagedSnapshot)
        }
      } else if snapshotHeaders[snapshot.name] != nil {
        validSnapshots.append(snapshot.sequence)  // checked when it is needed
      }
    }
    validSnapshots.reverse()
    let base = chosen?.sequence ?? 0

    // 3. The records after the snapshot, from the segment that holds base + 1.
    var spans: [JournalRecordFiles.Span] = []
    var startIndex = 0
    while startIndex + 1 < segments.count, segments[startIndex + 1].first <= base + 1 { startIndex += 1 }
    if !segments.isEmpty, segments[startIndex].first > base + 1 {
      // Only snapshots were moved aside so far: they are the ones that
      // would have led to these records.
      throw .missingRecords(after: base, path: path(segments[startIndex].name), damagedSnapshots: damage)
    }
    var expected = segments.isEmpty ? base + 1 : segments[startIndex].first
    var damagedFrom: Int?  // index of the first segment moved aside whole
    var index = startIndex
    while index < segments.count {
      let segment = segments[index]
      guard let headerLength = segmentHeaders[segment.name] else {
        try moveAside(segment.name, from: 0, reason: .damagedHeader)
        damagedFrom = index
        break
      }
      if segment.first != expected {
        try moveAside(segment.name, from: 0, reason: .sequenceGap(expected: expected, found: segment.first))
        damagedFrom = index
        break
      }
      let descriptor = try directory.open(segment.name, O_RDONLY)
      defer { systemClose(descriptor) }
      try scanner.start(descriptor, path: path(segment.name), at: headerLength, expecting: expected)
      var span: JournalRecordFiles.Span?
      var problem: (reason: JournalDamage.Reason, offset: Int)?
      scan: while true {
        switch try scanner.next(keepingBody: false) {
        case .record(let sequence, _, _, let offset, let end) where sequence > base:
          if span == nil {
            span = JournalRecordFiles.Span(
              name: segment.name, path: path(segment.name), device: scanner.device, inode: scanner.inode,
              start: offset, end: end, first: sequence, last: sequence)
          }
          span?.end = end
          span?.last = sequence
        case .record: continue
        case .damage(let reason, let offset):
          problem = (reason, offset)
          break scan
        case .end: break scan
        }
      }
      expected = scanner.expected
      if let span { spans.append(span) }
      if let problem {
        try cutAside(
          segment.name, copying: descriptor, size: scanner.size, from: problem.offset, reason: problem.reason)
        damagedFrom = index + 1
        break
      }
      index += 1
    }
    if let damagedFrom {
      for segment in segments[damagedFrom...] where directory.exists(segment.name) {
        try moveAside(segment.name, from: 0, reason: .followsDamage)
      }
      segments.removeSubrange(damagedFrom...)
    }

    // 4. The segment to append to: the last, if its records end where the
    // journal goes on; otherwise a new one (a new journal, or records lost
    // before a snapshot's sequence).
    let next = max(expected, base + 1)
    var segmentList = segments.map(\.first)
    let segmentName: String
    if let last = segments.last, expected == next, startIndex < segments.count {
      segmentName = last.name
    } else {
      segmentName = JournalFiles.segment(next)
      try directory.writeAtomically(
        JournalFormat.encode(.init(kind: .segment, identity: identity, sequence: next)), named: segmentName)
      segmentList.append(next)
    }
    let descriptor = try directory.open(segmentName, O_WRONLY)
    let end: Int
    do { end = try FileSystem.size(of: descriptor, path: path(segmentName)) } catch {
      systemClose(descriptor)
      throw error
    }
    let state = JournalState(
      segment: descriptor, segmentPath: path(segmentName), end: end, nextSequence: next,
      schedule: SyncSchedule(durability: durability, openedAt: .now), segments: segmentList,
      snapshots: validSnapshots, failure: nil)
    return (Found(snapshot: chosen, spans: spans), state)
  }

  /// The state in snapshot `name`, or `nil` when it does not read back whole.
  func readSnapshot(_ name: String, sequence: UInt64, headerLength: Int?) throws(JournalError) -> [UInt8]? {
    guard let headerLength else { return nil }
    let descriptor = try directory.open(name, O_RDONLY)
    defer { systemClose(descriptor) }
    let bytes = try FileSystem.read(descriptor, path: path(name))
    guard bytes.count > headerLength,
      case .record(sequence, _, let body, bytes.count) = JournalFormat.decodeFrame(
        bytes, at: headerLength, maximumPayload: Int(UInt32.max))
    else { return nil }
    return Array(bytes[body])
  }

  /// Copies the bytes from `offset` to `size` of segment `name` (open at
  /// `source`) to its aside file, syncs it, then cuts the segment at
  /// `offset` and syncs it.
  mutating func cutAside(
    _ name: String, copying source: Int32, size: Int, from offset: Int, reason: JournalDamage.Reason
  ) throws(JournalError) {
    let aside = asideName(for: name, offset: offset)
    try directory.copyAtomically(from: source, path: path(name), range: offset..<size, named: aside)
    let descriptor = try directory.open(name, O_WRONLY)
    defer { systemClose(descriptor) }
    try FileSystem.truncate(descriptor, to: offset, path: path(name))
    try FileSystem.sync(descriptor, path: path(name))
    damage.append(
      JournalDamage(
        path: path(name), offset: offset, byteCount: size - offset, reason: reason, asidePath: path(aside)))
  }

  /// Renames file `name` aside whole.
  mutating func moveAside(_ name: String, from offset: Int, reason: JournalDamage.Reason) throws(JournalError) {
    let descriptor = try directory.open(name, O_RDONLY)
    let size: Int
    do { size = try FileSystem.size(of: descriptor, path: path(name)) } catch {
      systemClose(descriptor)
      throw error
    }
    systemClose(descriptor)
    let aside = asideName(for: name, offset: offset)
    try directory.rename(name, to: aside)
    try directory.sync()
    damage.append(
      JournalDamage(path: path(name), offset: offset, byteCount: size, reason: reason, asidePath: path(aside)))
  }

  /// `name.aside-at-<offset>`, or with `-2`, `-3`… when that exists (the
  /// same place damaged twice).
  func asideName(for name: String, offset: Int) -> String {
    let base = "\(name).aside-at-\(offset)"
    var candidate = base
    var suffix = 2
    while directory.exists(candidate) {
      candidate = "\(base)-\(suffix)"
      suffix += 1
    }
    return candidate
  }
}
