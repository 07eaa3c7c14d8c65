#if Postgres
  import AsyncCore
  import AsyncCoreJournal

  /// One entity's journal in a ``PostgresEntityStore``: recovers from what
  /// the activation read, appends through the store's writer under the
  /// ownership its activation took, and lets the ownership go on close.
  final class PostgresEntityJournal<State: Codable & Sendable, Action: Codable & Sendable>: CoreJournal {
    let entity: String
    let generation: UInt64
    let writer: PostgresWriter
    let codec: any JournalCodec
    let syncsOnRequest: Bool
    /// Lets the entity's ownership go: called once, on close.
    let release: @Sendable () async -> Void
    private let progress: Locked<EntityJournalProgress<State, Action>>

    init(
      entity: String, generation: UInt64, recovery: PostgresRecovery<State, Action>, writer: PostgresWriter,
      codec: any JournalCodec, snapshotEvery: Int, syncsOnRequest: Bool, release: @escaping @Sendable () async -> Void
    ) {
      self.entity = entity
      self.generation = generation
      self.writer = writer
      self.codec = codec
      self.syncsOnRequest = syncsOnRequest
      self.release = release
      progress = Locked(
        EntityJournalProgress(
          state: recovery.state, actions: recovery.actions, last: recovery.last,
          snapshotSequence: recovery.snapshotSequence, snapshotEvery: snapshotEvery))
    }

    /// `nil`: the store's interval covers every entity with one sync.
    var syncInterval: Duration? { nil }

    func recoverState() async throws -> State? {
      guard case .some(let found) = progress.withLock({ $0.takeState() }) else {
        fatalError(
          "AsyncCorePostgres: recoverState() on a journal already recovered; ask the store for a journal per core")
      }
      return found
    }

    func recoverActions() async throws -> [Action]? {
      progress.withLock { $0.takeActions() }
    }

    func encode(_ action: Action) throws -> [UInt8] {
      try codec.encode(action, or: PostgresStoreError.encodingFailed)
    }

    func append(_ records: [[UInt8]]) async throws -> Bool {
      let (first, closed) = progress.withLock { ($0.next, $0.closed) }
      guard !closed else { throw PostgresStoreError.closed }
      guard !records.isEmpty else { return false }
      try await writer.perform(
        .write(.append(entity: entity, first: first, bodies: records, generation: generation))
      ).get()
      return progress.withLock { $0.appended(first: first, count: records.count) }
    }

    func snapshot(_ state: State) async throws {
      guard let (last, due) = progress.withLock({ $0.snapshotBegins() }) else { throw PostgresStoreError.closed }
      guard due else { return }
      let body = try codec.encode(state, or: PostgresStoreError.encodingFailed)
      try await writer.perform(
        .write(.snapshot(entity: entity, sequence: last, body: body, generation: generation))
      ).get()
      progress.withLock { $0.snapshotStored(at: last) }
    }

    func sync() async throws {
      guard !progress.withLock({ $0.closed }) else { throw PostgresStoreError.closed }
      guard syncsOnRequest else { return }
      try await writer.perform(.sync).get()
    }

    /// Lets the entity's ownership go (once): another store may activate it.
    func close() async {
      if progress.withLock({ $0.close() }) { await release() }
    }
  }

  /// What an activation read of one entity, checked and decoded.
  struct PostgresRecovery<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
    var state: State?
    var actions: [Action]
    /// The sequence number of the last record or snapshot stored.
    var last: UInt64
    var snapshotSequence: UInt64

    /// Checks that the records follow the snapshot with no gap, then
    /// decodes them.
    init(
      entity: String, rows: [(kind: Int32, sequence: Int64, body: [UInt8])], codec: any JournalCodec
    ) throws(PostgresStoreError) {
      var rows = rows[...]
      state = nil
      snapshotSequence = 0
      if let first = rows.first, first.kind == 1 {
        rows = rows.dropFirst()
        snapshotSequence = UInt64(first.sequence)
        do {
          state = try codec.decode(State.self, from: first.body)
        } catch {
          throw .decodingFailed(entity: entity, sequence: snapshotSequence, description: String(describing: error))
        }
      }
      var expected = snapshotSequence + 1
      for row in rows {
        guard UInt64(row.sequence) == expected else { throw .damaged(entity: entity, sequence: expected) }
        expected += 1
      }
      last = expected - 1
      actions = []
      actions.reserveCapacity(rows.count)
      for row in rows {
        do {
          actions.append(try codec.decode(Action.self, from: row.body))
        } catch {
          throw .decodingFailed(entity: entity, sequence: UInt64(row.sequence), description: String(describing: error))
        }
      }
    }
  }
#endif
