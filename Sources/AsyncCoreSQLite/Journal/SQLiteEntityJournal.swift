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
  /// Whether ``sync()`` has work (not under `synchronous=FULL`).
  let syncsOnRequest: Bool
  private let progress: Locked<EntityJournalProgress<State, Action>>

  init(
    entity: EntityKey, recovery: EntityRecovery<State, Action>, writer: GroupCommitWriter, codec: any JournalCodec,
    snapshotEvery: Int, syncsOnRequest: Bool
  ) {
    self.entity = entity
    self.writer = writer
    self.codec = codec
    self.syncsOnRequest = syncsOnRequest
    progress = Locked(
      EntityJournalProgress(
        state: recovery.state, actions: recovery.actions, last: recovery.last,
        snapshotSequence: recovery.snapshotSequence, snapshotEvery: snapshotEvery))
  }

  /// `nil`: the store's own interval (``SQLiteEntityStore/syncInterval``),
  /// which its registry drives, covers every entity with one sync.
  var syncInterval: Duration? { nil }

  func recoverState() async throws -> State? {
    guard case .some(let found) = progress.withLock({ $0.takeState() }) else {
      fatalError(
        "AsyncCoreSQLite: recoverState() on a journal already recovered; ask the store for a journal per core")
    }
    return found
  }

  func recoverActions() async throws -> [Action]? {
    progress.withLock { $0.takeActions() }
  }

  func encode(_ action: Action) throws -> [UInt8] {
    try codec.encode(action, or: SQLiteStoreError.encodingFailed)
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
    return progress.withLock { $0.appended(first: first, count: records.count) }
  }

  func snapshot(_ state: State) async throws {
    guard let (last, due) = progress.withLock({ $0.snapshotBegins() }) else { throw SQLiteStoreError.closed }
    guard due else { return }  // nothing since the last one
    let body = try codec.encode(state, or: SQLiteStoreError.encodingFailed)
    let row = StoredRow(entity: entity, sequence: last, body: body)
    try await writer.perform(.snapshot(entity: entity, row: row)).get()
    progress.withLock { $0.snapshotStored(at: last) }
  }

  func sync() async throws {
    guard !progress.withLock({ $0.closed }) else { throw SQLiteStoreError.closed }
    guard syncsOnRequest else { return }
    try await writer.perform(.sync).get()
  }

  /// Releases nothing but itself: the store's writer, its sync and its
  /// close make what was committed durable.
  func close() async {
    _ = progress.withLock { $0.close() }
  }
}
