#if Postgres
  import AsyncCore
  import AsyncCoreJournal
  import Logging
  import NIOCore
  import PostgresNIO
  import Synchronization

  #if canImport(FoundationEssentials)
    import FoundationEssentials
  #else
    import Foundation
  #endif

  /// Every entity's journal on a PostgreSQL server that several processes
  /// share, each entity active in one of them at a time.
  ///
  /// ```swift
  /// let store = try await PostgresEntityStore<String, Cart, CartAction>(
  ///   configuration: .init(host: "127.0.0.1", port: 5432, username: "app", password: nil, database: "shop", tls: .disable),
  ///   owner: "node-1")
  /// let carts = Entities(store: store, initialState: { Cart(owner: $0) }, reducer: cartReducer)
  /// try await carts.dispatch(.add("tea"), to: "ada")   // committed on the server, then reduced
  /// ```
  ///
  /// **One owner.** Activating an entity takes a session-level advisory
  /// lock on its key (`pg_try_advisory_lock`); passivating it lets the lock
  /// go. While another store holds it, activation fails at once with
  /// ``PostgresStoreError/ownedElsewhere(entity:owner:)``, naming that
  /// store's `owner`. If a process dies, the server ends its session and
  /// its locks with it: another store can take its entities as soon as the
  /// server notices (at once for a killed process, whose socket closes).
  ///
  /// **Fencing.** Records are keyed by (entity, sequence number): a writer
  /// that appends a number another has taken fails with
  /// ``PostgresStoreError/conflict(entity:sequence:)``, and the history is
  /// never overwritten nor forked. If the store's connection ends, the
  /// journals opened on it fail with
  /// ``PostgresStoreError/ownershipLost(entity:)`` and write nothing more:
  /// the registry activates those entities anew on a new connection, if it
  /// can take them again.
  ///
  /// **Group commit.** Appends of every entity go through one writer, which
  /// commits all that wait in one statement (one transaction). Durability:
  /// under `.everyAction` the session's `synchronous_commit` is `on` (a
  /// commit returns once the server's WAL is flushed); otherwise it is
  /// `off`, and ``sync()`` commits one write with `synchronous_commit` on,
  /// which the server flushes with every commit before it.
  ///
  /// See <doc:ScalingOut> for the design and its trade-offs.
  public final class PostgresEntityStore<
    ID: Hashable & Sendable & Codable, State: Codable & Sendable, Action: Codable & Sendable
  >: EntityStore, Sendable {
    /// The name this store's session carries (`application_name`): what
    /// another store's refusal names.
    ///
    /// ```swift
    /// print(store.owner)   // "node-1"
    /// ```
    public let owner: String
    let schema: PostgresSchema
    let session: PostgresSession
    let writer: PostgresWriter
    let activator: PostgresActivator
    let codec: any JournalCodec
    let durability: JournalDurability
    let snapshotEvery: Int
    let diagnostics: @Sendable (EffectFailure) -> Void
    let logger: Logger
    let figures: FiguresBox
    private let isClosed = Atomic<Bool>(false)
    // `Sendable`: each call encodes with state of its own, and it is never
    // configured after `init`.
    let keyEncoder: JSONEncoder

    /// Shared with the session's and the writer's callbacks.
    final class FiguresBox: Sendable {
      let locked = Locked(Figures())
      func withLock<R: Sendable>(_ body: (inout Figures) -> R) -> R { locked.withLock { body(&$0) } }
    }

    struct Figures: Sendable {
      /// Open journals by the generation of the connection they own under.
      var owned: [UInt64: Set<String>] = [:]
      var ownedElsewhere = 0
      var handovers = 0
      var fencingRefusals = 0
    }

    /// Connects, makes the store's tables under `namespace` if they are
    /// missing, replaces its two functions (`<namespace>_activate`,
    /// `_commit`), and checks that the tables hold these types.
    ///
    /// ```swift
    /// let store = try await PostgresEntityStore<String, Cart, CartAction>(
    ///   configuration: configuration, owner: "node-1", durability: .interval(.milliseconds(10)))
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: How to reach the server (postgres-nio's).
    ///   - owner: This store's name, as another store's refusal reports it:
    ///     a host and port a load balancer can redirect to, say. 1 to 63
    ///     printable ASCII characters: the server keeps it as the session's
    ///     `application_name`, which holds no more.
    ///   - namespace: The prefix of the store's tables (`<namespace>_records`,
    ///     `_snapshots`, `_meta`) and functions: 1 to 40 lowercase letters, digits or
    ///     underscores, starting with a letter.
    ///   - schemaVersion: Your version of `State` and `Action`'s encoding;
    ///     tables written with another are refused.
    ///   - durability: `.everyAction` commits with `synchronous_commit` on;
    ///     the others with it off, and ``sync()`` flushes (every interval,
    ///     driven by the registry, under `.interval(_:)`).
    ///   - snapshotEvery: Records of an entity between two of its snapshots,
    ///     or `nil` for a snapshot only on passivation. At least 1.
    ///   - codec: How actions and states become bytes.
    ///   - logger: postgres-nio's logger for the connection.
    ///   - diagnostics: Told of every entity an activation refuses for
    ///     another reason than its owner, and of a failed last sync.
    /// - Throws: ``PostgresStoreError/unavailable(message:)`` when the server
    ///   cannot be reached, ``PostgresStoreError/incompatible(expected:found:)``.
    public init(
      configuration: PostgresConnection.Configuration,
      owner: String,
      namespace: String = "asynccore",
      schemaVersion: Int = 1,
      durability: JournalDurability = .everyAction,
      snapshotEvery: Int? = 1_000,
      codec: some JournalCodec = JSONJournalCodec(),
      logger: Logger = Logger(label: "AsyncCorePostgres"),
      diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError
    ) async throws(PostgresStoreError) {
      if let snapshotEvery, snapshotEvery < 1 {
        fatalError(
          "AsyncCorePostgres: PostgresEntityStore(snapshotEvery: \(snapshotEvery)): at least 1, or nil for none")
      }
      let printable = owner.utf8.allSatisfy { (0x20...0x7E).contains($0) }
      if owner.isEmpty || owner.utf8.count > 63 || !printable {
        fatalError(
          "AsyncCorePostgres: PostgresEntityStore(owner: \(owner.debugDescription)): 1 to 63 printable ASCII "
            + "characters (PostgreSQL's application_name keeps no more)")
      }
      if case .interval(let interval) = durability, interval < .milliseconds(1) {
        fatalError(
          "AsyncCorePostgres: PostgresEntityStore(durability: .interval(\(interval))): at least 1 ms; "
            + "use .everyAction to sync every commit")
      }
      var configuration = configuration
      configuration.options.additionalStartupParameters += [
        ("application_name", owner),
        ("synchronous_commit", durability == .everyAction ? "on" : "off"),
        // The activation's read takes its snapshot after the locks only
        // under read committed, whatever the server's or the role's default.
        ("default_transaction_isolation", "read committed"),
      ]
      let schema = PostgresSchema(namespace: namespace, logger: logger)
      let figures = FiguresBox()
      let session = PostgresSession(configuration: configuration, logger: logger) { generation in
        figures.withLock { figures in
          figures.handovers += figures.owned.removeValue(forKey: generation)?.count ?? 0
        }
      }
      let identity = JournalIdentity(action: Action.self, state: State.self, schemaVersion: schemaVersion)
      let idType = JournalIdentity(action: ID.self, state: ID.self, schemaVersion: 0).actionType
      do {
        let lease = try await session.lease()
        try await schema.prepare(
          lease, identity: "AsyncCorePostgres 1; id \(idType); \(identity)")
      } catch {
        await session.close()
        throw error
      }
      self.owner = owner
      self.schema = schema
      self.session = session
      self.figures = figures
      writer = PostgresWriter(session: session, schema: schema) { figures.withLock { $0.fencingRefusals += 1 } }
      activator = PostgresActivator(
        session: session, schema: schema, owner: owner,
        claims: .init(
          claim: { entity, generation in
            figures.withLock { $0.owned[generation, default: []].insert(entity).inserted }
          },
          unclaim: { entity, generation in _ = figures.withLock { $0.owned[generation]?.remove(entity) } }))
      self.codec = codec
      self.durability = durability
      self.snapshotEvery = snapshotEvery ?? .max
      self.diagnostics = diagnostics
      self.logger = logger
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      keyEncoder = encoder
    }

    deinit {
      activator.closeWithoutWaiting()
      writer.closeWithoutWaiting()
      let session = session
      Task { await session.close() }
    }

    // MARK: - EntityStore

    /// Takes the ownership of entity `id`, then reads its snapshot and the
    /// records after it: its journal, or an empty one for a new id.
    ///
    /// ```swift
    /// let journal = try await store.journal(for: "ada")
    /// ```
    ///
    /// One round trip, shared by the activations that wait together: a
    /// function of the store's takes each lock, then reads with a snapshot
    /// taken after it (so it sees the last owner's last commit). A lost
    /// connection is made again first.
    ///
    /// - Throws: ``PostgresStoreError/ownedElsewhere(entity:owner:)`` if
    ///   another store holds it, or this one already has it open;
    ///   ``PostgresStoreError/encodingFailed(description:)`` if its JSON is
    ///   longer than ``maximumKeyBytes``;
    ///   ``PostgresStoreError/unavailable(message:)``,
    ///   ``PostgresStoreError/damaged(entity:sequence:)``,
    ///   ``PostgresStoreError/decodingFailed(entity:sequence:description:)``,
    ///   ``PostgresStoreError/closed``.
    public func journal(for id: ID) async throws(PostgresStoreError) -> any CoreJournal<State, Action> {
      let entity = try key(of: id)
      do {
        return try await open(entity)
      } catch {
        switch error {
        case .ownedElsewhere: figures.withLock { $0.ownedElsewhere += 1 }
        case .closed: break
        default: diagnostics(EffectFailure(error: error, fileID: #fileID, line: #line))
        }
        throw error
      }
    }

    private func open(_ entity: String) async throws(PostgresStoreError) -> any CoreJournal<State, Action> {
      let key = OwnershipKey(namespace: schema.namespace, entity: entity)
      let activation = try await activator.perform(.init(entity: entity, key: key)).get()
      let lease = activation.lease
      let recovery: PostgresRecovery<State, Action>
      do {
        recovery = try PostgresRecovery(entity: entity, rows: activation.rows, codec: codec)
      } catch {
        try? await schema.unlock(key, on: lease)
        unclaim(entity, lease.generation)
        throw error
      }
      return PostgresEntityJournal(
        entity: entity, generation: lease.generation, recovery: recovery, writer: writer, codec: codec,
        snapshotEvery: snapshotEvery, syncsOnRequest: durability != .everyAction
      ) { [self] in await release(entity, key, lease) }
    }

    /// Lets `entity` go, if its generation still holds it.
    private func release(_ entity: String, _ key: OwnershipKey, _ lease: Lease) async {
      guard unclaim(entity, lease.generation) else { return }
      try? await schema.unlock(key, on: lease)
    }

    @discardableResult
    private func unclaim(_ entity: String, _ generation: UInt64) -> Bool {
      figures.withLock { $0.owned[generation]?.remove(entity) != nil }
    }

    /// The interval of `JournalDurability.interval(_:)`; `nil` under
    /// `.everyAction` (each commit is flushed) and `.operatingSystem`.
    ///
    /// ```swift
    /// let interval = store.syncInterval   // .milliseconds(10) under .interval(.milliseconds(10))
    /// ```
    public var syncInterval: Duration? {
      if case .interval(let interval) = durability { return interval }
      return nil
    }

    /// Makes every commit so far survive a crash of the server: one write
    /// committed with `synchronous_commit` on.
    ///
    /// ```swift
    /// try await store.sync()
    /// ```
    ///
    /// Under `.everyAction` it returns at once (each commit was flushed).
    ///
    /// - Throws: ``PostgresStoreError/unavailable(message:)``,
    ///   ``PostgresStoreError/closed``.
    public func sync() async throws(PostgresStoreError) {
      guard durability != .everyAction else {
        if isClosed.load(ordering: .relaxed) { throw .closed }
        return
      }
      try await writer.perform(.sync).get()
    }

    /// Commits what waits, syncs, and closes the connection: the server lets
    /// go of every entity this store held.
    ///
    /// ```swift
    /// await store.close()
    /// ```
    public func close() async {
      isClosed.store(true, ordering: .relaxed)
      if durability != .everyAction, case .failure(let error) = await writer.perform(.sync), error != .closed {
        diagnostics(EffectFailure(error: CoreDiagnostic.syncFailed(error), fileID: #fileID, line: #line))
      }
      await activator.close()
      await writer.close()
      await session.close()
    }

    /// The store's ownership figures: what `Entities.metrics` reports as
    /// its `ownership`.
    ///
    /// ```swift
    /// if let ownership = store.ownership { print(ownership.owned, ownership.handovers) }
    /// ```
    public var ownership: EntityOwnershipMetrics? {
      figures.withLock { figures in
        EntityOwnershipMetrics(
          owned: figures.owned.values.reduce(0) { $0 + $1.count }, ownedElsewhere: figures.ownedElsewhere,
          handovers: figures.handovers, fencingRefusals: figures.fencingRefusals)
      }
    }

    /// Statements the writer committed so far, each a group of appends.
    ///
    /// ```swift
    /// print(store.commits)
    /// ```
    public var commits: Int { writer.commits }

    // MARK: - For the tests

    /// Batches of activations sent to the server so far.
    package var activationCalls: Int { activator.calls }

    /// The session's `synchronous_commit`, as the server reports it.
    package func synchronousCommit() async throws -> String {
      try await schema.synchronousCommit(on: session.lease())
    }

    /// The isolation of a transaction on the store's session, as the server reports it.
    package func transactionIsolation() async throws -> String {
      let rows = try await session.lease().rows("SELECT current_setting('transaction_isolation')", logger: logger)
      return try rows.first?.decode(String.self) ?? ""
    }

    /// The table names, and the entity key of `id`.
    package var tables: (records: String, snapshots: String, meta: String) {
      (schema.records, schema.snapshots, schema.meta)
    }

    /// The entity key of `id`: its JSON, keys sorted, at most
    /// ``maximumKeyBytes`` bytes.
    package func key(of id: ID) throws(PostgresStoreError) -> String {
      let bytes: Data
      do {
        bytes = try keyEncoder.encode(id)
      } catch {
        throw .encodingFailed(description: String(describing: error))
      }
      guard bytes.count <= Self.maximumKeyBytes else {
        throw .encodingFailed(
          description: "the id's JSON is \(bytes.count) bytes; a key of the records' index holds at most "
            + "\(Self.maximumKeyBytes)")
      }
      return String(decoding: bytes, as: UTF8.self)
    }

    /// The longest id's JSON, in bytes, that a store keeps: the records'
    /// primary key index holds rows of at most 2,704 bytes.
    ///
    /// ```swift
    /// let fits = try JSONEncoder().encode(id).count <= PostgresEntityStore<String, Cart, CartAction>.maximumKeyBytes
    /// ```
    public static var maximumKeyBytes: Int { 2_048 }
  }

#endif
