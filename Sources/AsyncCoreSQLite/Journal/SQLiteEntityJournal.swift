import AsyncCore
import AsyncCoreJournal

/// What an activation read of one entity, checked and decoded.
struct EntityRecovery<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  var state: State?
  var actions: [Action]
  /// The sequence number of the last record or snapshot stored.
  var last: UInt64
  /// The snapshot's sequence number, or 0 for none.
  var snapshotSequence: UInt64

  /// Checks every row (its checksum, and that the records follow the
  /// snapshot with no gap), then decodes them.
  init(entity: EntityKey, stored: StoredEntity, codec: any JournalCodec) throws(SQLiteStoreError) {
    snapshotSequence = stored.snapshot?.sequence ?? 0
    var expected = snapshotSequence + 1
    if let snapshot = stored.snapshot {
      guard RowCheck.value(entity: entity.bytes, sequence: snapshot.sequence, body: snapshot.body) == snapshot.crc
      else { throw .damaged(entity: entity.name, sequence: snapshot.sequence) }
    }
    for record in stored.records {
      guard record.sequence == expected else { throw .damaged(entity: entity.name, sequence: expected) }
      guard RowCheck.value(entity: entity.bytes, sequence: record.sequence, body: record.body) == record.crc else {
        throw .damaged(entity: entity.name, sequence: record.sequence)
      }
      expected += 1
    }
    last = expected - 1
    if let snapshot = stored.snapshot {
      do {
        state = try codec.decode(State.self, from: snapshot.body)
      } catch {
        throw .decodingFailed(entity: entity.name, sequence: snapshot.sequence, description: String(describing: error))
      }
    }
    actions = []
    actions.reserveCapacity(stored.records.count)
    for record in stored.records {
      do {
        actions.append(try codec.decode(Action.self, from: record.body))
      } catch {
        throw .decodingFailed(entity: entity.name, sequence: record.sequence, description: String(describing: error))
      }
    }
  }
}

/// One entity's journal in a ``SQLiteEntityStore``: recovers from what the
/// activation read, and appends through the store's writer.
final class SQLiteEntityJournal<State: Codable & Sendable, Action: Codable & Sendable>: CoreJournal {
  let entity: EntityKey
  let writer: GroupCommitWriter
  let codec: any JournalCodec
  let snapshotEvery: Int
  /// Whether ``sync()`` has work (not under `synchronous=FULL`).
  let syncsOnRequest: Bool
  private let progress: Locked<Progress>

  private struct Progress: Sendable {
    /// Not yet handed to the core: `nil` once recoverState() took it.
    var recovery: EntityRecovery<State, Action>?
    var stateTaken = false
    /// The next record's sequence number.
    var next: UInt64
    var snapshotSequence: UInt64
    var sinceSnapshot: Int
    var closed = false
  }

  /// The most actions `recoverActions()` returns at once.
  static var batch: Int { 4_096 }

  init(
    entity: EntityKey, recovery: EntityRecovery<State, Action>, writer: GroupCommitWriter, codec: any JournalCodec,
    snapshotEvery: Int, syncsOnRequest: Bool
  ) {
    self.entity = entity
    self.writer = writer
    self.codec = codec
    self.snapshotEvery = snapshotEvery
    self.syncsOnRequest = syncsOnRequest
    progress = Locked(
      Progress(
        recovery: recovery, next: recovery.last + 1, snapshotSequence: recovery.snapshotSequence,
        sinceSnapshot: recovery.actions.count))
  }

  /// `nil`: the store's own interval (``SQLiteEntityStore/syncInterval``),
  /// which its registry drives, covers every entity with one sync.
  var syncInterval: Duration? { nil }

  func recoverState() async throws -> State? {
    let state = progress.withLock { progress -> State?? in
      guard !progress.stateTaken, let recovery = progress.recovery else { return .none }
      progress.stateTaken = true
      return .some(recovery.state)
    }
    guard case .some(let found) = state else {
      fatalError(
        "AsyncCoreSQLite: recoverState() on a journal already recovered; ask the store for a journal per core")
    }
    progress.withLock { $0.recovery?.state = nil }
    return found
  }

  func recoverActions() async throws -> [Action]? {
    progress.withLock { progress in
      guard var recovery = progress.recovery else { return nil }
      progress.stateTaken = true
      guard !recovery.actions.isEmpty else {
        progress.recovery = nil
        return nil
      }
      progress.recovery = nil  // the array below is then its only holder: no copy
      let batch: [Action]
      if recovery.actions.count <= Self.batch {
        batch = recovery.actions
        recovery.actions = []
      } else {
        batch = Array(recovery.actions[..<Self.batch])
        recovery.actions.removeFirst(Self.batch)
      }
      progress.recovery = recovery
      return batch
    }
  }

  func encode(_ action: Action) throws -> [UInt8] {
    do {
      return try codec.encode(action)
    } catch {
      throw SQLiteStoreError.encodingFailed(description: String(describing: error))
    }
  }

  func append(_ records: [[UInt8]]) async throws -> Bool {
    let (first, closed) = progress.withLock { ($0.next, $0.closed) }
    guard !closed else { throw SQLiteStoreError.closed }
    guard !records.isEmpty else { return false }
    var rows: [StoredRow] = []
    rows.reserveCapacity(records.count)
    for (offset, body) in records.enumerated() {
      rows.append(StoredRow(entity: entity, sequence: first + UInt64(offset), body: body))
    }
    try await writer.perform(.append(entity: entity, first: first, rows: rows)).get()
    return progress.withLock { progress in
      progress.next = first + UInt64(records.count)
      progress.sinceSnapshot += records.count
      return progress.sinceSnapshot >= snapshotEvery
    }
  }

  func snapshot(_ state: State) async throws {
    let (last, due, closed) = progress.withLock { progress in
      // Reset first, as the file journal does: a failed snapshot is not
      // retried at every append.
      progress.sinceSnapshot = 0
      return (progress.next - 1, progress.next - 1 > progress.snapshotSequence, progress.closed)
    }
    guard !closed else { throw SQLiteStoreError.closed }
    guard due else { return }  // nothing since the last one
    let body: [UInt8]
    do {
      body = try codec.encode(state)
    } catch {
      throw SQLiteStoreError.encodingFailed(description: String(describing: error))
    }
    let row = StoredRow(entity: entity, sequence: last, body: body)
    try await writer.perform(.snapshot(entity: entity, row: row)).get()
    progress.withLock { $0.snapshotSequence = max($0.snapshotSequence, last) }
  }

  func sync() async throws {
    guard !progress.withLock({ $0.closed }) else { throw SQLiteStoreError.closed }
    guard syncsOnRequest else { return }
    try await writer.perform(.sync).get()
  }

  /// Releases nothing but itself: the store's writer, its sync and its
  /// close make what was committed durable.
  func close() async {
    progress.withLock { $0.closed = true }
  }
}
