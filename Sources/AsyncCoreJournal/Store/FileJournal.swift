import AsyncCore
import Dispatch
import Synchronization

/// A journal on files: checksummed records and snapshots in a directory of
/// its own, for a durable `Core`.
///
/// ```swift
/// let journal = try FileJournal<Orders, OrderAction>(directory: "/var/lib/orders/journal")
/// let orders = try await Core(initialState: Orders(), journal: journal, reducer: reduceOrders)
/// try await orders.dispatch(.place(order))   // on disk, then reduced
/// await orders.shutdown()                     // syncs and closes the journal
/// ```
///
/// Opening takes the directory's lock and checks what it holds: a torn or
/// damaged tail is moved aside, never deleted, and reported
/// (``JournalDiagnostic/damageMovedAside(_:)``); a journal of other types
/// or another schema version is refused, never reset. The core then reads
/// the newest snapshot and the records after it, a batch at a time.
///
/// Records are written and synced on a thread of the journal's own, never
/// on the core nor the cooperative pool. Under ``JournalDurability/everyAction``
/// one `fdatasync` covers each of the core's appends, however many
/// dispatchers' actions it carries.
public final class FileJournal<State: Sendable & Codable, Action: Sendable & Codable>: CoreJournal {
  let journal: Journal
  let codec: any JournalCodec
  let durability: JournalDurability
  let snapshotRecords: Int
  let snapshotBytes: Int
  let diagnostics: @Sendable (EffectFailure) -> Void
  let queue = DispatchQueue(label: "AsyncCoreJournal.FileJournal")
  let progress: Mutex<Progress>

  /// What opening found: the snapshot recovery starts from, the records
  /// after it and the damage moved aside.
  ///
  /// ```swift
  /// print("\(journal.recovery.recordsToReplay) records to replay")
  /// ```
  public let recovery: FileJournalRecovery

  struct Progress {
    var pending: JournalRecovery?
    var batches: RecordBatches?
    var recovered = false
    var recordsSinceSnapshot: Int
    var bytesSinceSnapshot = 0
  }

  /// Opens (or creates) the journal in `directory`.
  ///
  /// ```swift
  /// let journal = try FileJournal<Tally, TallyAction>(
  ///   directory: path, durability: .interval(.milliseconds(50)), snapshotEvery: 10_000)
  /// ```
  ///
  /// - Parameters:
  ///   - directory: The journal's directory, created if missing; its parent
  ///     must exist. One opener at a time, in this process or another: a
  ///     second gets ``JournalError/locked(path:)``. Removed, moved or
  ///     replaced while open: appends throw
  ///     ``JournalError/directoryRemoved(path:)``, and the core shuts down.
  ///   - schemaVersion: Your version of `State` and `Action`'s encoding; a
  ///     journal written with another is refused.
  ///   - durability: When records reach the disk; an interval is at least
  ///     1 ms, and its syncs run on the core's clock.
  ///   - snapshotEvery: Records between two snapshots of the state, or
  ///     `nil` for no bound by count. At least 1.
  ///   - snapshotEveryBytes: Record bytes between two snapshots, or `nil`
  ///     for no bound by size; whichever bound comes first takes the
  ///     snapshot. At least 1.
  ///   - codec: How actions and the state become bytes.
  ///   - diagnostics: Told of the damage opening moved aside, and of a
  ///     failed last sync when the journal closes.
  /// - Throws: ``JournalError`` if the journal cannot be opened.
  public init(
    directory: String,
    schemaVersion: Int = 1,
    durability: JournalDurability = .everyAction,
    snapshotEvery: Int? = 10_000,
    snapshotEveryBytes: Int? = 64 << 20,
    codec: some JournalCodec = JSONJournalCodec(),
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError
  ) throws(JournalError) {
    for (name, bound) in [("snapshotEvery", snapshotEvery), ("snapshotEveryBytes", snapshotEveryBytes)] {
      if let bound, bound < 1 {
        programmerError("FileJournal(\(name): \(bound)): a snapshot bound must be at least 1, or nil for none")
      }
    }
    if case .interval(let interval) = durability, interval < .milliseconds(1) {
      programmerError(
        "FileJournal(durability: .interval(\(interval))): the interval must be at least 1 ms; "
          + "use .everyAction to sync every append")
    }
    let identity = JournalIdentity(action: Action.self, state: State.self, schemaVersion: schemaVersion)
    let opened: (journal: Journal, recovered: JournalRecovery)
    do {
      opened = try Journal.open(directory: directory, identity: identity, durability: durability)
    } catch {
      if case .missingRecords(_, _, let damagedSnapshots) = error {
        for damage in damagedSnapshots { Self.report(damage, to: diagnostics) }
      }
      throw error
    }
    for damage in opened.recovered.damage { Self.report(damage, to: diagnostics) }
    journal = opened.journal
    self.codec = codec
    self.durability = durability
    self.diagnostics = diagnostics
    snapshotRecords = snapshotEvery ?? .max
    snapshotBytes = snapshotEveryBytes ?? .max
    recovery = FileJournalRecovery(
      snapshotSequence: opened.recovered.snapshot?.sequence, recordsToReplay: opened.recovered.recordCount,
      damage: opened.recovered.damage)
    progress = Mutex(Progress(pending: opened.recovered, recordsSinceSnapshot: opened.recovered.recordCount))
  }

  private static func report(_ damage: JournalDamage, to diagnostics: @Sendable (EffectFailure) -> Void) {
    diagnostics(EffectFailure(error: JournalDiagnostic.damageMovedAside(damage), fileID: #fileID, line: #line))
  }

  // MARK: - CoreJournal

  /// The interval of ``JournalDurability/interval(_:)``; `nil` otherwise.
  ///
  /// ```swift
  /// print(journal.syncInterval ?? .zero)
  /// ```
  public var syncInterval: Duration? {
    if case .interval(let interval) = durability { return interval }
    return nil
  }

  /// The newest snapshot's state, decoded.
  ///
  /// ```swift
  /// let state = try await journal.recoverState()   // the core calls this
  /// ```
  ///
  /// - Throws: ``JournalError/snapshotDecodingFailed(sequence:description:)``.
  public func recoverState() async throws -> State? {
    let snapshot = progress.withLock { progress -> JournalSnapshot?? in
      guard !progress.recovered, let pending = progress.pending else { return .none }
      return .some(pending.snapshot)
    }
    guard case .some(let found) = snapshot else {
      programmerError(
        "FileJournal.recoverState: the journal was already recovered; give each core a journal of its own")
    }
    guard let found else { return nil }
    do {
      return try codec.decode(State.self, from: found.state)
    } catch {
      throw JournalError.snapshotDecodingFailed(sequence: found.sequence, description: Self.bounded(error))
    }
  }

  /// The next batch of recovered actions, decoded; `nil` at the end.
  ///
  /// ```swift
  /// while let actions = try await journal.recoverActions() { print(actions.count) }
  /// ```
  ///
  /// - Throws: ``JournalError/decodingFailed(sequence:description:)``.
  public func recoverActions() async throws -> [Action]? {
    let records = try progress.withLock { progress throws -> [JournalRecord]? in
      guard let pending = progress.pending else { return nil }
      progress.recovered = true
      if progress.batches == nil { progress.batches = RecordBatches(try pending.recordBatches(of: 4_096)) }
      guard let records = try progress.batches?.next() else {
        progress.pending = nil
        progress.batches = nil
        return nil
      }
      return records
    }
    guard let records else { return nil }
    var actions: [Action] = []
    actions.reserveCapacity(records.count)
    for record in records {
      do {
        actions.append(try codec.decode(Action.self, from: record.body))
      } catch {
        throw JournalError.decodingFailed(sequence: record.sequence, description: Self.bounded(error))
      }
    }
    return actions
  }

  /// Encodes `action` for the next append.
  ///
  /// ```swift
  /// let record = try journal.encode(.place(order))   // the core calls this
  /// ```
  ///
  /// - Throws: ``JournalError/encodingFailed(description:)``, or
  ///   ``JournalError/recordTooLarge(bytes:limit:)``.
  public func encode(_ action: Action) throws -> [UInt8] {
    let body: [UInt8]
    do {
      body = try codec.encode(action)
    } catch {
      throw JournalError.encodingFailed(description: Self.bounded(error))
    }
    guard body.count <= journal.maximumRecordBytes else {
      throw JournalError.recordTooLarge(bytes: body.count, limit: journal.maximumRecordBytes)
    }
    return body
  }

  /// Appends `records` in one write, synced as the durability says.
  ///
  /// ```swift
  /// let snapshotDue = try await journal.append([record])   // the core calls this
  /// ```
  public func append(_ records: [[UInt8]]) async throws -> Bool {
    try await onQueue { () throws(JournalError) -> Bool in
      try self.journal.append(records)
      // A busy journal under an interval syncs once the interval has passed.
      if case .interval = self.durability { try self.journal.syncIfDue() }
      let bytes = records.reduce(0) { $0 + $1.count + JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes }
      return self.progress.withLock { progress in
        progress.recordsSinceSnapshot += records.count
        progress.bytesSinceSnapshot += bytes
        return progress.recordsSinceSnapshot >= self.snapshotRecords
          || progress.bytesSinceSnapshot >= self.snapshotBytes
      }
    }
  }

  /// Writes `state` as a snapshot covering every record appended so far.
  ///
  /// ```swift
  /// try await journal.snapshot(state)   // the core calls this
  /// ```
  public func snapshot(_ state: State) async throws {
    try await onQueue { () throws(JournalError) in
      self.progress.withLock { progress in
        progress.recordsSinceSnapshot = 0
        progress.bytesSinceSnapshot = 0
      }
      let next = self.journal.nextSequence
      guard next > 0 else { return }
      let bytes: [UInt8]
      do {
        bytes = try self.codec.encode(state)
      } catch {
        throw .encodingFailed(description: Self.bounded(error))
      }
      try self.journal.writeSnapshot(bytes, coveringThrough: next - 1)
    }
  }

  /// Syncs every record appended so far.
  ///
  /// ```swift
  /// try await journal.sync()   // the core calls this; use Core.sync()
  /// ```
  public func sync() async throws {
    try await onQueue { () throws(JournalError) in try self.journal.sync() }
  }

  /// Syncs and closes the journal, releasing its lock.
  ///
  /// ```swift
  /// await journal.close()   // the core's shutdown calls this
  /// ```
  public func close() async {
    _ = try? await onQueue { () throws(JournalError) in
      defer { self.journal.close() }
      do throws(JournalError) {
        try self.journal.sync()
      } catch .closed {
      } catch {
        self.diagnostics(EffectFailure(error: CoreDiagnostic.syncFailed(error), fileID: #fileID, line: #line))
      }
    }
  }

  /// Runs `body` on the journal's queue, after everything handed to it before.
  private func onQueue<Result: Sendable>(
    _ body: @escaping @Sendable () throws(JournalError) -> Result
  ) async throws(JournalError) -> Result {
    let result: Swift.Result<Result, JournalError> = await withCheckedContinuation { continuation in
      queue.async { continuation.resume(returning: Swift.Result { () throws(JournalError) in try body() }) }
    }
    return try result.get()
  }

  static func bounded(_ error: any Error) -> String {
    logSafe(String(describing: error), quoted: false, limit: 200)
  }
}

/// What opening a ``FileJournal`` found.
///
/// ```swift
/// let recovery = journal.recovery
/// print(recovery.snapshotSequence ?? 0, recovery.recordsToReplay, recovery.damage.count)
/// ```
public struct FileJournalRecovery: Sendable, Hashable {
  /// The record the newest snapshot covers through; `nil` when there is
  /// none and the core starts from its `initialState`.
  ///
  /// ```swift
  /// if journal.recovery.snapshotSequence == nil { print("no snapshot yet") }
  /// ```
  public let snapshotSequence: UInt64?
  /// The records after that snapshot, which the core reduces when made.
  ///
  /// ```swift
  /// print("replaying \(journal.recovery.recordsToReplay) records")
  /// ```
  public let recordsToReplay: Int
  /// The damage moved aside (also reported to the diagnostics handler).
  ///
  /// ```swift
  /// for damage in journal.recovery.damage { print(damage.asidePath) }
  /// ```
  public let damage: [JournalDamage]
}

/// The reader of a recovery's records, kept between two calls of
/// `recoverActions`.
final class RecordBatches: @unchecked Sendable {
  // Safety: only `FileJournal.progress`'s lock holder calls it.
  let next: () throws -> [JournalRecord]?

  init(_ next: @escaping () throws -> [JournalRecord]?) {
    self.next = next
  }
}
