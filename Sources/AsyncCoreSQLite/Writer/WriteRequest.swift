/// An entity's key in the database: its id's JSON, keys sorted.
package struct EntityKey: Sendable, Hashable {
  package let bytes: [UInt8]

  /// The JSON as text, for errors and reports (`"ada"`, `{"shard":3,"user":7}`).
  package var name: String { String(decoding: bytes, as: UTF8.self) }
}

/// A row as stored: its sequence number, its body and its checksum.
struct StoredRow: Sendable, Equatable {
  let sequence: UInt64
  let body: [UInt8]
  let crc: Int64

  init(entity: EntityKey, sequence: UInt64, body: [UInt8]) {
    self.sequence = sequence
    self.body = body
    self.crc = RowCheck.value(entity: entity.bytes, sequence: sequence, body: body)
  }

  init(sequence: UInt64, body: [UInt8], crc: Int64) {
    self.sequence = sequence
    self.body = body
    self.crc = crc
  }
}

/// What a journal hands the writer.
enum WriteRequest: Sendable {
  /// Records of `entity` from `first` on, contiguous: refused unless the
  /// entity's last stored record (or snapshot) is `first - 1`.
  case append(entity: EntityKey, first: UInt64, rows: [StoredRow])
  /// The entity's state through `row.sequence`, which must be its last
  /// stored record: replaces its snapshot and deletes the records it covers.
  case snapshot(entity: EntityKey, row: StoredRow)
  /// Make every transaction committed so far durable.
  case sync
  /// Run `body` on the writer's thread before the batch's transaction:
  /// tests and the benchmark hold the writer with it to gather a batch.
  case hold(@Sendable () -> Void)
}
