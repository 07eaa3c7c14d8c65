import AsyncCoreJournal

/// The database's tables and what identifies it as a store's.
///
/// `records` holds each entity's actions after its snapshot, `snapshots`
/// one state per entity. Both are `WITHOUT ROWID`, clustered on the entity
/// key, so an entity's rows sit together and one range scan reads them.
package enum StoreSchema {
  /// `PRAGMA application_id`: "ACSQ", so that another program's database
  /// is told apart from ours and from a new, empty one.
  static let applicationID: Int64 = 0x4143_5351
  /// The layout of the tables below; a newer one is refused.
  static let format = 1

  package static let create = """
    CREATE TABLE records(
      entity BLOB NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL, crc INTEGER NOT NULL,
      PRIMARY KEY(entity, seq)) WITHOUT ROWID;
    CREATE TABLE snapshots(
      entity BLOB NOT NULL PRIMARY KEY, seq INTEGER NOT NULL, body BLOB NOT NULL, crc INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE meta(key TEXT NOT NULL PRIMARY KEY, value NOT NULL) WITHOUT ROWID;
    """

  // The writer's statements.
  static let head = """
    SELECT max(coalesce((SELECT max(seq) FROM records WHERE entity = ?1), 0),
               coalesce((SELECT seq FROM snapshots WHERE entity = ?1), 0))
    """
  // INSERT, never OR REPLACE: a sequence number already taken fails.
  static let insertRecord = "INSERT INTO records(entity, seq, body, crc) VALUES(?1, ?2, ?3, ?4)"
  static let upsertSnapshot = """
    INSERT INTO snapshots(entity, seq, body, crc) VALUES(?1, ?2, ?3, ?4)
    ON CONFLICT(entity) DO UPDATE SET seq = excluded.seq, body = excluded.body, crc = excluded.crc
    """
  static let deleteCovered = "DELETE FROM records WHERE entity = ?1 AND seq <= ?2"

  // The reader's statements.
  static let readSnapshot = "SELECT seq, body, crc FROM snapshots WHERE entity = ?1"
  static let readRecords = "SELECT seq, body, crc FROM records WHERE entity = ?1 AND seq > ?2 ORDER BY seq"

  /// The meta rows a store of these types and schema version holds.
  static func meta(identity: JournalIdentity, idType: String) -> [(key: String, value: String)] {
    [
      ("format", String(format)), ("schemaVersion", String(identity.schemaVersion)), ("idType", idType),
      ("stateType", identity.stateType), ("actionType", identity.actionType),
    ]
  }
}

/// The checksum of a row: CRC-32C of the entity key, the sequence number
/// (8 bytes, little-endian) and the body. Covering the key and the number
/// catches a row whose key or number was damaged into another's place.
enum RowCheck {
  static func value(entity: [UInt8], sequence: UInt64, body: [UInt8]) -> Int64 {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(entity.count + 8 + body.count)
    bytes += entity
    withUnsafeBytes(of: sequence.littleEndian) { bytes += $0 }
    bytes += body
    return Int64(CRC32C.checksum(bytes))
  }
}
