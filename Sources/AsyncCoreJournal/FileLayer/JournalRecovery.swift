import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What opening a journal found: the newest valid snapshot, how many
/// records follow it, the damage it moved aside, and a way to read those
/// records, a batch at a time.
///
/// ```swift
/// let (journal, recovered) = try Journal.open(directory: path, identity: identity, durability: .everyAction)
/// var state = try recovered.snapshot.map { try codec.decode(Orders.self, from: $0.state) } ?? Orders()
/// try recovered.readRecords(batch: 1_000) { records in
///   for record in records { reduce(&state, try codec.decode(OrderAction.self, from: record.body)) }
/// }
/// for damage in recovered.damage { print("moved aside:", damage) }
/// ```
///
/// Opening checks every record and keeps none: memory stays at one read
/// buffer and one batch, whatever the journal's length.
package struct JournalRecovery: Sendable {
  /// The newest snapshot that read back whole, if any.
  ///
  /// ```swift
  /// let start = recovered.snapshot?.sequence ?? 0
  /// ```
  package var snapshot: JournalSnapshot?
  /// Every damaged part found and moved aside, in the order found.
  ///
  /// ```swift
  /// if !recovered.damage.isEmpty { report(recovered.damage) }
  /// ```
  package var damage: [JournalDamage]
  /// Where the records are: in memory, or in the journal's files.
  let source: Source
  /// What the open read to recover: every record's bytes, no body kept.
  package let openStatistics: JournalReadStatistics

  enum Source: Sendable {
    case memory([JournalRecord])
    case files(JournalRecordFiles)
  }

  /// A recovery of records held in memory (a test, or a stand-in for a
  /// journal, builds one); ``readRecords(batch:_:)`` hands them out.
  ///
  /// ```swift
  /// let nothing = JournalRecovery(snapshot: nil, records: [], damage: [])
  /// ```
  package init(snapshot: JournalSnapshot?, records: [JournalRecord], damage: [JournalDamage]) {
    self.snapshot = snapshot
    self.damage = damage
    self.source = .memory(records)
    self.openStatistics = JournalReadStatistics()
  }

  init(
    snapshot: JournalSnapshot?, damage: [JournalDamage], files: JournalRecordFiles, statistics: JournalReadStatistics
  ) {
    self.snapshot = snapshot
    self.damage = damage
    self.source = .files(files)
    self.openStatistics = statistics
  }

  /// How many records follow the snapshot: what ``readRecords(batch:_:)`` hands out.
  ///
  /// ```swift
  /// print("replaying \(recovered.recordCount) records")
  /// ```
  package var recordCount: Int {
    switch source {
    case .memory(let records): records.count
    case .files(let files): files.recordCount
    }
  }

  /// Reads the records after the snapshot again, in order, and calls
  /// `body` with each `batch` of them (the last batch may be shorter; with
  /// no record, `body` is not called).
  ///
  /// ```swift
  /// try recovered.readRecords(batch: 1_000) { records in
  ///   for record in records { reduce(&state, try codec.decode(OrderAction.self, from: record.body)) }
  /// }
  /// ```
  ///
  /// Each record's checksum and sequence is checked again. Memory: one
  /// batch of records and one read buffer (a chunk, or one record when
  /// larger).
  ///
  /// - Important: Call it before the journal's first ``Journal/append(_:)``
  ///   or ``Journal/writeSnapshot(_:coveringThrough:)``, and before its
  ///   ``Journal/close()``: after any of them it traps. It can be called
  ///   more than once before then. The recovery holds its journal: a
  ///   journal released while its recovery is kept stays open (and
  ///   locked) until the recovery goes too.
  /// - Throws: ``JournalError/changedSinceOpen(path:offset:)`` when a
  ///   file no longer holds the records it held at the open (never a
  ///   record skipped), ``JournalError/fileSystem(operation:path:errno:)``
  ///   when one cannot be read, and whatever `body` throws (which stops
  ///   the read).
  package func readRecords(batch: Int, _ body: ([JournalRecord]) throws -> Void) throws {
    var statistics = JournalReadStatistics()
    try readRecords(batch: batch, statistics: &statistics, body)
  }

  /// ``readRecords(batch:_:)``, adding what it read to `statistics`.
  package func readRecords(
    batch: Int, statistics: inout JournalReadStatistics, _ body: ([JournalRecord]) throws -> Void
  ) throws {
    if batch < 1 { programmerError("JournalRecovery.readRecords: batch \(batch) is not at least 1") }
    switch source {
    case .memory(let records):
      var start = 0
      while start < records.count {
        let end = min(start + batch, records.count)
        try body(Array(records[start..<end]))
        start = end
      }
    case .files(let files):
      try files.read(batch: batch, statistics: &statistics, body)
    }
  }

  /// A reader of the records after the snapshot, a batch per call, `nil`
  /// at the end: ``readRecords(batch:_:)`` at the caller's pace. Same rules.
  package func recordBatches(of batch: Int) throws -> () throws -> [JournalRecord]? {
    if batch < 1 { programmerError("JournalRecovery.recordBatches: batch \(batch) is not at least 1") }
    switch source {
    case .memory(let records):
      var start = 0
      return {
        guard start < records.count else { return nil }
        let end = min(start + batch, records.count)
        defer { start = end }
        return Array(records[start..<end])
      }
    case .files(let files):
      let cursor = try JournalRecordCursor(files: files)
      return { try cursor.next(batch: batch) }
    }
  }

  /// Every record after the snapshot, read again into one array (tests).
  package func allRecords() throws -> [JournalRecord] {
    var all: [JournalRecord] = []
    all.reserveCapacity(recordCount)
    try readRecords(batch: 4096) { all += $0 }
    return all
  }

  /// ``allRecords()``, trapping when the files cannot be read again: for
  /// the callers that need them all at once (tests, the benchmark), until they read
  /// in batches.
  package var records: [JournalRecord] {
    do { return try allRecords() } catch {
      fatalError("JournalRecovery.records: the journal's records could not be read again: \(error)")
    }
  }
}

/// The records a recovery found, by file and offset, to read them again.
struct JournalRecordFiles: Sendable {
  /// The records of one segment that follow the snapshot.
  struct Span: Sendable {
    var name: String
    var path: String
    /// The file's identity when it was checked.
    var device: UInt64
    var inode: UInt64
    /// The offsets of the first record's frame and of the end of the last one.
    var start: Int
    var end: Int
    var first: UInt64
    var last: UInt64
  }

  /// The journal these records are in; held, so that a caller who keeps
  /// only the recovery can still read (the journal closes when both are gone).
  let journal: Journal
  var spans: [Span]
  let maximumRecordBytes: Int

  var recordCount: Int { spans.reduce(0) { $0 + Int($1.last - $1.first + 1) } }

  func read(batch: Int, statistics: inout JournalReadStatistics, _ body: ([JournalRecord]) throws -> Void) throws {
    let cursor = try JournalRecordCursor(files: self)
    while let records = try cursor.next(batch: batch) { try body(records) }
    statistics.bytesRead += cursor.scanner.statistics.bytesRead
    statistics.bodyBytesKept += cursor.scanner.statistics.bodyBytesKept
    statistics.largestBuffer = max(statistics.largestBuffer, cursor.scanner.statistics.largestBuffer)
  }
}

/// Reads a recovery's records again, a batch at a time, where the last
/// batch left off: what a durable core pulls at its own pace.
package final class JournalRecordCursor {
  let files: JournalRecordFiles
  let descriptors: [Int32]
  var scanner: FrameScanner
  private var span = 0
  private var started = false

  init(files: JournalRecordFiles) throws {
    self.files = files
    let journal = files.journal
    // Opened under the journal's lock, after checking it has not moved on:
    // the descriptors then hold these files whatever a later call removes.
    let opened = journal.state.withLock { state -> Result<[Int32], JournalError>? in
      guard state.segment >= 0, state.recordsAsRecovered else { return nil }
      var descriptors: [Int32] = []
      for span in files.spans {
        do throws(JournalError) { descriptors.append(try journal.directoryHandle.open(span.name, O_RDONLY)) } catch {
          for descriptor in descriptors { systemClose(descriptor) }
          return .failure(error)
        }
      }
      return .success(descriptors)
    }
    guard let opened else {
      programmerError(
        "JournalRecovery.readRecords: called after the journal's first append or snapshot, or after its close")
    }
    descriptors = try opened.get()
    scanner = FrameScanner(maximumRecordBytes: files.maximumRecordBytes)
  }

  deinit {
    for descriptor in descriptors { systemClose(descriptor) }
  }

  /// The next records, at most `batch`; `nil` once every one was read.
  package func next(batch: Int) throws -> [JournalRecord]? {
    var pending: [JournalRecord] = []
    pending.reserveCapacity(min(batch, files.recordCount))
    while span < files.spans.count {
      let current = files.spans[span]
      if !started {
        try scanner.start(
          descriptors[span], path: current.path, at: current.start, expecting: current.first, limit: current.end)
        guard scanner.device == current.device, scanner.inode == current.inode, scanner.size == current.end else {
          throw JournalError.changedSinceOpen(path: current.path, offset: min(scanner.size, current.end))
        }
        started = true
      }
      switch try scanner.next(keepingBody: true) {
      case .record(let sequence, let time, let bytes, _, _):
        pending.append(JournalRecord(sequence: sequence, body: bytes ?? [], time: time))
        if pending.count == batch { return pending }
      case .damage(_, let offset):
        throw JournalError.changedSinceOpen(path: current.path, offset: offset)
      case .end(let offset):
        guard scanner.expected == current.last + 1 else {
          throw JournalError.changedSinceOpen(path: current.path, offset: offset)
        }
        span += 1
        started = false
      }
    }
    return pending.isEmpty ? nil : pending
  }
}
