import AsyncCore
import AsyncCoreJournal
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Every entity's journal in one SQLite database file: the store a
/// registry of entities keeps their states in while they are passive.
///
/// ```swift
/// let store = try SQLiteEntityStore<String, Cart, CartAction>(path: "/var/lib/carts.sqlite")
/// let journal = try await store.journal(for: "ada")   // what the registry does on activation
/// let cart = try await Core(initialState: Cart(owner: "ada"), journal: journal, reducer: cartReducer)
/// try await cart.dispatch(.add("tea"))   // committed (with other entities' appends), then reduced
/// await cart.shutdown()
/// await store.close()
/// ```
///
/// Each entity's journal appends its records to one writer thread, which
/// commits every append waiting in one transaction, then resumes them all:
/// entities active at once share their commits (and their syncs). An
/// activation reads the entity's snapshot and the records after it in one
/// read, on the caller, on a read connection of its own (WAL readers never
/// wait for the writer), and checks each row's checksum: a damaged entity
/// is refused alone (``SQLiteStoreError/damaged(entity:sequence:)``).
///
/// An entity is stored under its id's JSON, keys sorted and slashes
/// unescaped (`JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes`): `"ada"` for a `String`, `{"shard":3,"user":7}`
/// for a struct. Its records are numbered from 1, with no gap; a snapshot
/// replaces the entity's previous one and deletes the records it covers.
///
/// - Important: One store per file, in this process or another: a second
///   gets ``SQLiteStoreError/locked(path:)``. Durability means what it means
///   for `FileJournal` (see `JournalDurability`); the <doc:Storage> article
///   says how each policy maps to SQLite's settings.
public final class SQLiteEntityStore<
  ID: Hashable & Sendable & Codable, State: Codable & Sendable, Action: Codable & Sendable
>: EntityStore, Sendable {
  let writer: GroupCommitWriter
  let reader: Locked<StoreReader?>
  let codec: any JournalCodec
  let durability: JournalDurability
  let snapshotEvery: Int
  let diagnostics: @Sendable (EffectFailure) -> Void
  // `Sendable`: each call encodes with state of its own, and it is never
  // configured after `init`.
  let keyEncoder: JSONEncoder
  /// The database file's real path (a link's target).
  package let databasePath: String
  /// SQLite's settings on the writer's connection, read back after opening.
  package let settings: SQLiteSettings

  /// Opens (or creates) the store's database at `path`.
  ///
  /// ```swift
  /// let store = try SQLiteEntityStore<String, Cart, CartAction>(
  ///   path: "/var/lib/carts.sqlite", durability: .interval(.milliseconds(50)), snapshotEvery: 100)
  /// ```
  ///
  /// - Parameters:
  ///   - path: The database file, created if missing; its folder must
  ///     exist. A symbolic link is followed to a regular file; anything else
  ///     that is not a regular file is refused, never opened. SQLite keeps
  ///     `<path>-wal` and `<path>-shm` beside it, and the store its lock,
  ///     `<path>.lock`.
  ///   - schemaVersion: Your version of `State` and `Action`'s encoding; a
  ///     database written with another is refused.
  ///   - durability: When commits reach the disk: `.everyAction` syncs each
  ///     commit; under `.interval(_:)` the registry calls ``sync()`` every
  ///     interval (at least 1 ms); under `.operatingSystem`, only ``sync()``
  ///     and ``close()`` do.
  ///   - snapshotEvery: Records of an entity between two of its snapshots,
  ///     or `nil` for no bound (a snapshot only on passivation). At least 1.
  ///   - codec: How actions and states become bytes.
  ///   - diagnostics: Told of every entity an activation refuses, and of a
  ///     failed last sync when the store closes.
  /// - Throws: ``SQLiteStoreError`` if the store cannot be opened: nothing
  ///   is left open, and a file that is not a store's is left as it was.
  public init(
    path: String,
    schemaVersion: Int = 1,
    durability: JournalDurability = .everyAction,
    snapshotEvery: Int? = 1_000,
    codec: some JournalCodec = JSONJournalCodec(),
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError
  ) throws(SQLiteStoreError) {
    if let snapshotEvery, snapshotEvery < 1 {
      fatalError("AsyncCoreSQLite: SQLiteEntityStore(snapshotEvery: \(snapshotEvery)): at least 1, or nil for none")
    }
    if case .interval(let interval) = durability, interval < .milliseconds(1) {
      fatalError(
        "AsyncCoreSQLite: SQLiteEntityStore(durability: .interval(\(interval))): the interval must be at least 1 ms; "
          + "use .everyAction to sync every commit")
    }
    let file = try StoreFile.open(path)
    let identity = JournalIdentity(action: Action.self, state: State.self, schemaVersion: schemaVersion)
    let idType = JournalIdentity(action: ID.self, state: ID.self, schemaVersion: 0).actionType
    var opened: SQLiteConnection?
    var readerConnection: StoreReader?
    do {
      let connection = try SQLiteConnection.open(file.resolvedPath, named: path, create: true)
      opened = connection
      try StoreOpening.prepare(connection, path: path, identity: identity, idType: idType, durability: durability)
      settings = try StoreOpening.settings(of: connection)
      try file.syncFolder()
      readerConnection = try StoreReader(path: file.resolvedPath, named: path)
      let writerConnection = try WriterConnection(
        connection: connection, syncsEachCommit: durability == .everyAction, lockDescriptor: file.lockDescriptor)
      writer = try GroupCommitWriter(connection: writerConnection)
    } catch {
      readerConnection?.close()
      opened?.close()
      releaseLock(file.lockDescriptor)
      throw error
    }
    reader = Locked(readerConnection)
    databasePath = file.resolvedPath
    self.codec = codec
    self.durability = durability
    self.snapshotEvery = snapshotEvery ?? .max
    self.diagnostics = diagnostics
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    keyEncoder = encoder
  }

  deinit {
    reader.withLock { reader in
      reader?.close()
      reader = nil
    }
    writer.closeWithoutWaiting()
  }

  // MARK: - EntityStore

  /// The journal of entity `id`: its snapshot and the records after it,
  /// read and checked now, or nothing for a new id.
  ///
  /// ```swift
  /// let journal = try await store.journal(for: "ada")
  /// let cart = try await Core(initialState: Cart(owner: "ada"), journal: journal, reducer: cartReducer)
  /// ```
  ///
  /// One read on the caller's thread, under the read connection's lock;
  /// the rows are checked and decoded before it returns, and the journal
  /// hands them to its core from memory.
  ///
  /// - Important: One open journal per id. A second journal of an id that
  ///   appends after the first fails with
  ///   ``SQLiteStoreError/conflict(entity:sequence:)``: it never overwrites
  ///   nor forks the entity's history.
  /// - Throws: ``SQLiteStoreError/damaged(entity:sequence:)`` when a row
  ///   fails its checksum or a record is missing,
  ///   ``SQLiteStoreError/corrupt(entity:message:)`` when SQLite finds the
  ///   database corrupt there, ``SQLiteStoreError/decodingFailed(entity:sequence:description:)``,
  ///   ``SQLiteStoreError/closed``. The diagnostics handler is told too.
  public func journal(for id: ID) async throws(SQLiteStoreError) -> any CoreJournal<State, Action> {
    let entity = try key(of: id)
    let read = reader.withLock { reader -> Result<StoredEntity, SQLiteStoreError> in
      guard let reader else { return .failure(.closed) }
      return reader.read(entity)
    }
    do {
      let stored = try read.get()
      let recovery = try EntityRecovery<State, Action>(entity: entity, stored: stored, codec: codec)
      return SQLiteEntityJournal(
        entity: entity, recovery: recovery, writer: writer, codec: codec, snapshotEvery: snapshotEvery,
        syncsOnRequest: durability != .everyAction)
    } catch {
      if error != .closed { diagnostics(EffectFailure(error: error, fileID: #fileID, line: #line)) }
      throw error
    }
  }

  /// The interval of `JournalDurability.interval(_:)`; `nil` under
  /// `.everyAction` (each commit is synced) and `.operatingSystem`.
  ///
  /// ```swift
  /// let interval = store.syncInterval   // .milliseconds(50) under .interval(.milliseconds(50))
  /// ```
  public var syncInterval: Duration? {
    if case .interval(let interval) = durability { return interval }
    return nil
  }

  /// Makes every transaction committed so far survive a power loss.
  ///
  /// ```swift
  /// try await store.sync()
  /// ```
  ///
  /// It waits behind the writer's queue and shares a batch with the
  /// appends in it; under `.everyAction` it returns at once (each commit
  /// was synced).
  ///
  /// - Throws: ``SQLiteStoreError/fileSystem(operation:path:errno:)`` if
  ///   the sync failed, ``SQLiteStoreError/closed``.
  public func sync() async throws(SQLiteStoreError) {
    guard durability != .everyAction else { return }
    try await writer.perform(.sync).get()
  }

  /// Commits what waits, syncs, checkpoints the WAL into the database file
  /// and closes it, releasing the lock. Journals still open then fail with
  /// ``SQLiteStoreError/closed``.
  ///
  /// ```swift
  /// await store.close()
  /// ```
  public func close() async {
    reader.withLock { reader in
      reader?.close()
      reader = nil
    }
    if durability != .everyAction, case .failure(let error) = await writer.perform(.sync), error != .closed {
      diagnostics(EffectFailure(error: CoreDiagnostic.syncFailed(error), fileID: #fileID, line: #line))
    }
    await writer.close()
  }

  // MARK: - For the benchmark and the tests

  /// Transactions the writer committed.
  package var commitCount: Int { writer.commits.load(ordering: .relaxed) }
  /// Records in those transactions.
  package var rowsCommitted: Int { writer.rows.load(ordering: .relaxed) }

  /// Requests waiting for the writer to take them.
  package var waitingRequests: Int { writer.waitingCount }

  /// Runs `body` on the writer's thread before its batch's transaction;
  /// returns once that batch is done. While `body` blocks, requests
  /// gather into the next batch.
  package func holdWriter(_ body: @escaping @Sendable () -> Void) async {
    _ = await writer.perform(.hold(body))
  }

  /// The bytes the database takes on disk: the file and its WAL.
  package func bytesOnDisk() -> Int {
    [databasePath, databasePath + "-wal"].reduce(0) { total, path in
      var info = stat()
      return total + (stat(path, &info) == 0 ? Int(info.st_size) : 0)
    }
  }

  /// The entity key of `id`: its JSON, keys sorted.
  package func key(of id: ID) throws(SQLiteStoreError) -> EntityKey {
    do {
      return EntityKey(bytes: Array(try keyEncoder.encode(id)))
    } catch {
      throw .encodingFailed(description: String(describing: error))
    }
  }
}

/// SQLite's settings on the writer's connection, as read back.
package struct SQLiteSettings: Sendable, Equatable {
  /// `PRAGMA journal_mode`: `wal`.
  package var journalMode: String
  /// `PRAGMA synchronous`: 2 (FULL) or 1 (NORMAL).
  package var synchronous: Int

  package init(journalMode: String, synchronous: Int) {
    self.journalMode = journalMode
    self.synchronous = synchronous
  }
}
