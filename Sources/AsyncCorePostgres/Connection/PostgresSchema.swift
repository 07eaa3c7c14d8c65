#if Postgres
  import Logging
  import NIOCore
  import PostgresNIO

  /// The store's tables under one namespace, and every statement it runs.
  ///
  /// - `<ns>_records(entity, sequence, body)`: the records, keyed by
  ///   (entity, sequence): the key refuses a second writer of a sequence.
  /// - `<ns>_snapshots(entity, sequence, body)`: an entity's latest snapshot.
  /// - `<ns>_meta(key, value)`: the identity the tables were made with.
  struct PostgresSchema: Sendable {
    let namespace: String
    let logger: Logger

    /// Traps unless `namespace` can name tables unquoted.
    init(namespace: String, logger: Logger) {
      let first = namespace.unicodeScalars.first
      let valid =
        (1...40).contains(namespace.unicodeScalars.count) && first.map { ("a"..."z").contains($0) } == true
        && namespace.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
      guard valid else {
        fatalError(
          "AsyncCorePostgres: PostgresEntityStore(namespace: \"\(namespace)\"): 1 to 40 lowercase letters, "
            + "digits or underscores, starting with a letter")
      }
      self.namespace = namespace
      self.logger = logger
    }

    var records: String { namespace + "_records" }
    var snapshots: String { namespace + "_snapshots" }
    var meta: String { namespace + "_meta" }

    /// Makes the tables if they are missing, under a lock so that stores
    /// starting together do not race, then checks their identity.
    func prepare(_ lease: Lease, identity: String) async throws(PostgresStoreError) {
      let statements: [PostgresQuery] = [
        "BEGIN",
        "SELECT pg_advisory_xact_lock(\(OwnershipKey(namespace: namespace, entity: "").value))",
        """
        CREATE TABLE IF NOT EXISTS \(unescaped: records) (
          entity text NOT NULL, sequence bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (entity, sequence))
        """,
        """
        CREATE TABLE IF NOT EXISTS \(unescaped: snapshots) (
          entity text PRIMARY KEY, sequence bigint NOT NULL, body bytea NOT NULL)
        """,
        "CREATE TABLE IF NOT EXISTS \(unescaped: meta) (key text PRIMARY KEY, value text NOT NULL)",
        """
        INSERT INTO \(unescaped: meta) (key, value) VALUES ('identity', \(identity)), ('synced', '')
        ON CONFLICT (key) DO NOTHING
        """,
      ]
      do {
        for statement in statements { try await lease.run(statement, logger: logger) }
        let rows = try await lease.rows("SELECT value FROM \(unescaped: meta) WHERE key = 'identity'", logger: logger)
        let found = try rows.first?.decode(String.self) ?? ""
        try await lease.run("COMMIT", logger: logger)
        guard found == identity else { throw PostgresStoreError.incompatible(expected: identity, found: found) }
      } catch {
        try? await lease.run("ROLLBACK", logger: logger)
        if let error = error as? PostgresStoreError { throw error }
        throw PostgresFailure(error).storeError
      }
    }

    /// Takes `key` for this session, or returns `false` if another holds it.
    func tryLock(_ key: OwnershipKey, on lease: Lease) async throws -> Bool {
      let rows = try await lease.rows("SELECT pg_try_advisory_lock(\(key.value))", logger: logger)
      return try rows.first?.decode(Bool.self) ?? false
    }

    func unlock(_ key: OwnershipKey, on lease: Lease) async throws {
      try await lease.run("SELECT pg_advisory_unlock(\(key.value))", logger: logger)
    }

    /// The `application_name` of the session that holds `key`, if any.
    func holder(of key: OwnershipKey, on lease: Lease) async throws -> String? {
      let bits = UInt64(bitPattern: key.value)
      let (high, low) = (Int64(bits >> 32), Int64(bits & 0xFFFF_FFFF))
      let rows = try await lease.rows(
        """
        SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = \(high)::int8::oid AND l.objid = \(low)::int8::oid
        LIMIT 1
        """, logger: logger)
      return try rows.first?.decode(String.self)
    }

    /// An entity's snapshot (kind 1), then its records after it (kind 0),
    /// in one statement: one consistent view.
    func read(_ entity: String, on lease: Lease) async throws -> [(
      kind: Int32, sequence: Int64, body: ByteBuffer
    )] {
      let rows = try await lease.rows(
        """
        SELECT 1 AS kind, sequence, body FROM \(unescaped: snapshots) WHERE entity = \(entity)
        UNION ALL
        SELECT 0, r.sequence, r.body FROM \(unescaped: records) r WHERE r.entity = \(entity)
          AND r.sequence > coalesce((SELECT sequence FROM \(unescaped: snapshots) WHERE entity = \(entity)), 0)
        ORDER BY kind DESC, sequence
        """, logger: logger)
      return try rows.map { row in
        let (kind, sequence, body) = try row.decode((Int32, Int64, ByteBuffer).self)
        return (kind, sequence, body)
      }
    }

    /// One statement that inserts every record, upserts every snapshot and
    /// deletes the records the snapshots cover: one transaction.
    func commit(_ writes: [PostgresWrite], on lease: Lease) async throws {
      var appended: (entities: [String], sequences: [Int64], bodies: [ByteBuffer]) = ([], [], [])
      var snapshotted: (entities: [String], sequences: [Int64], bodies: [ByteBuffer]) = ([], [], [])
      for write in writes {
        switch write {
        case .append(let entity, let first, let bodies, _):
          for (offset, body) in bodies.enumerated() {
            appended.entities.append(entity)
            appended.sequences.append(Int64(first) + Int64(offset))
            appended.bodies.append(ByteBuffer(bytes: body))
          }
        case .snapshot(let entity, let sequence, let body, _):
          snapshotted.entities.append(entity)
          snapshotted.sequences.append(Int64(sequence))
          snapshotted.bodies.append(ByteBuffer(bytes: body))
        }
      }
      try await lease.run(
        """
        WITH r AS (
          INSERT INTO \(unescaped: records) (entity, sequence, body)
          SELECT * FROM unnest(\(appended.entities)::text[], \(appended.sequences)::int8[], \(appended.bodies)::bytea[])
          RETURNING 1),
        s AS (
          INSERT INTO \(unescaped: snapshots) AS old (entity, sequence, body)
          SELECT * FROM unnest(\(snapshotted.entities)::text[], \(snapshotted.sequences)::int8[], \
        \(snapshotted.bodies)::bytea[])
          ON CONFLICT (entity) DO UPDATE SET sequence = excluded.sequence, body = excluded.body
          WHERE old.sequence < excluded.sequence
          RETURNING 1),
        d AS (
          DELETE FROM \(unescaped: records) x USING unnest(\(snapshotted.entities)::text[], \
        \(snapshotted.sequences)::int8[]) AS c(entity, sequence)
          WHERE x.entity = c.entity AND x.sequence <= c.sequence
          RETURNING 1)
        SELECT (SELECT count(*) FROM r) + (SELECT count(*) FROM s) + (SELECT count(*) FROM d)
        """, logger: logger)
    }

    /// A write committed with `synchronous_commit` on: it returns once the
    /// server's WAL is flushed through it, and so through every commit before.
    func sync(on lease: Lease) async throws {
      try await lease.run(
        """
        WITH c AS (SELECT set_config('synchronous_commit', 'on', true) AS v)
        UPDATE \(unescaped: meta) SET value = c.v FROM c WHERE key = 'synced'
        """, logger: logger)
    }

    /// The session's `synchronous_commit`, as the server reports it.
    func synchronousCommit(on lease: Lease) async throws -> String {
      let rows = try await lease.rows("SELECT current_setting('synchronous_commit')", logger: logger)
      return try rows.first?.decode(String.self) ?? ""
    }
  }

  /// An entity's advisory lock key: FNV-1a (64 bits) of the namespace, a
  /// zero byte and the entity's key. Two entities that collide share a
  /// lock: one may be refused while the other is active, never both owned.
  struct OwnershipKey: Sendable, Hashable {
    let value: Int64

    init(namespace: String, entity: String) {
      var hash: UInt64 = 0xcbf2_9ce4_8422_2325
      for byte in Array(namespace.utf8) + [0] + Array(entity.utf8) {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
      }
      value = Int64(bitPattern: hash)
    }
  }

  /// What a journal hands the writer.
  enum PostgresWrite: Sendable {
    /// Records of `entity` from `first` on, under the ownership of `generation`.
    case append(entity: String, first: UInt64, bodies: [[UInt8]], generation: UInt64)
    /// The entity's state through `sequence`: replaces its snapshot and
    /// deletes the records it covers.
    case snapshot(entity: String, sequence: UInt64, body: [UInt8], generation: UInt64)

    var entity: String {
      switch self {
      case .append(let entity, _, _, _), .snapshot(let entity, _, _, _): entity
      }
    }

    var generation: UInt64 {
      switch self {
      case .append(_, _, _, let generation), .snapshot(_, _, _, let generation): generation
      }
    }
  }

#endif
