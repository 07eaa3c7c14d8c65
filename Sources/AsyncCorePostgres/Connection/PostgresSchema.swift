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
    var activateFunction: String { namespace + "_activate" }
    var commitFunction: String { namespace + "_commit" }

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
        // Each statement in a volatile function reads with a snapshot of its
        // own: the read sees every commit before the lock was let go.
        """
        CREATE OR REPLACE FUNCTION \(unescaped: activateFunction)(entities text[], keys int8[])
        RETURNS TABLE (o_entity text, o_kind int4, o_sequence int8, o_body bytea)
        LANGUAGE plpgsql VOLATILE AS $f$
        DECLARE
          taken text[] := '{}';
          held int8[] := '{}';
        BEGIN
          FOR i IN 1 .. coalesce(array_length(entities, 1), 0) LOOP
            IF pg_try_advisory_lock(keys[i]) THEN
              taken := taken || entities[i];
              held := held || keys[i];
            ELSE
              RETURN QUERY SELECT entities[i], 2, 0::int8, convert_to(coalesce((
                SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid = ((keys[i] >> 32) & 4294967295)::oid AND l.objid = (keys[i] & 4294967295)::oid
                LIMIT 1), ''), 'UTF8');
            END IF;
          END LOOP;
          RETURN QUERY
            SELECT s.entity, 1, s.sequence, s.body FROM \(unescaped: snapshots) s WHERE s.entity = ANY (taken)
            UNION ALL
            SELECT r.entity, 0, r.sequence, r.body FROM \(unescaped: records) r
              LEFT JOIN \(unescaped: snapshots) s ON s.entity = r.entity
            WHERE r.entity = ANY (taken) AND r.sequence > coalesce(s.sequence, 0)
            ORDER BY 1, 2 DESC, 3;
        EXCEPTION WHEN query_canceled OR others THEN
          PERFORM pg_advisory_unlock(k) FROM unnest(held) AS k;
          RAISE;
        END
        $f$
        """,
        """
        CREATE OR REPLACE FUNCTION \(unescaped: commitFunction)(
          entities text[], sequences int8[], bodies bytea[], snapshotted text[], covered int8[], states bytea[])
        RETURNS void LANGUAGE plpgsql VOLATILE AS $f$
        BEGIN
          IF cardinality(entities) > 0 THEN
            INSERT INTO \(unescaped: records) (entity, sequence, body)
            SELECT * FROM unnest(entities, sequences, bodies);
          END IF;
          IF cardinality(snapshotted) > 0 THEN
            INSERT INTO \(unescaped: snapshots) AS old (entity, sequence, body)
            SELECT * FROM unnest(snapshotted, covered, states)
            ON CONFLICT (entity) DO UPDATE SET sequence = excluded.sequence, body = excluded.body
            WHERE old.sequence < excluded.sequence;
            DELETE FROM \(unescaped: records) x USING unnest(snapshotted, covered) AS c(entity, sequence)
            WHERE x.entity = c.entity AND x.sequence <= c.sequence;
          END IF;
        END
        $f$
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

    func unlock(_ key: OwnershipKey, on lease: Lease) async throws {
      try await lease.run("SELECT pg_advisory_unlock(\(key.value))", logger: logger)
    }

    /// Takes the lock of each entity it can, and reads those: per entity
    /// its snapshot (kind 1), then its records after it (kind 0), in order;
    /// for an entity another session holds, one row of kind 2 whose body
    /// is the holder's `application_name` (empty if it let go meanwhile).
    /// One statement, one round trip.
    func activate(
      _ entities: [String], keys: [Int64], on lease: Lease
    ) async throws -> [(entity: String, kind: Int32, sequence: Int64, body: ByteBuffer)] {
      let rows = try await lease.rows(
        "SELECT * FROM \(unescaped: activateFunction)(\(entities)::text[], \(keys)::int8[])", logger: logger)
      return try rows.map { row in
        let (entity, kind, sequence, body) = try row.decode((String, Int32, Int64, ByteBuffer).self)
        return (entity, kind, sequence, body)
      }
    }

    /// One statement that inserts every record, upserts every snapshot and
    /// deletes the records the snapshots cover: one transaction. The
    /// function's plans are made once per connection.
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
        SELECT \(unescaped: commitFunction)(\(appended.entities)::text[], \(appended.sequences)::int8[], \
        \(appended.bodies)::bytea[], \(snapshotted.entities)::text[], \(snapshotted.sequences)::int8[], \
        \(snapshotted.bodies)::bytea[])
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
