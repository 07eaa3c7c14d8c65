import AsyncCore
import AsyncCoreJournal

// The "journal" family's workload (see JournalBenchmarks.swift): a
// Codable state and action, their reducer, a binary codec of the
// benchmark's own, and the frames the raw baselines write.

/// A journaled core's state: a count and a checksum-like total, so that a
/// lost or reordered action shows.
struct JournalBenchState: Codable, Sendable, Equatable {
  var count = 0
  var total = 0
}

/// The journaled action: JSON of about 40 bytes, `{"deposit":{"account":…,"amount":…}}`.
enum JournalBenchAction: Codable, Sendable, Equatable {
  case deposit(account: Int, amount: Int)
}

@inline(never)
func journalBenchReduce(_ state: inout JournalBenchState, _ action: JournalBenchAction) {
  switch action {
  case .deposit(let account, let amount):
    state.count &+= 1
    state.total = state.total &* 31 &+ amount &+ account
  }
}

/// `count` deposits, no two neighbours alike; they repeat every
/// ``journalBenchPeriod``.
func journalBenchActions(_ count: Int) -> [JournalBenchAction] {
  (0..<count).map { .deposit(account: $0 % 1_000, amount: $0 % 97 + 1) }
}

/// After how many actions ``journalBenchActions(_:)`` repeats: 1,000
/// accounts times 97 amounts.
let journalBenchPeriod = 97_000

/// The state after `actions`, reduced in a plain loop: what every row checks.
func journalBenchReference(_ actions: [JournalBenchAction]) -> JournalBenchState {
  var state = JournalBenchState()
  for action in actions { journalBenchReduce(&state, action) }
  return state
}

/// Opens a durable core of the workload in `directory`, or ends the run.
func openJournalBenchCore(
  _ directory: String, durability: JournalDurability, codec: some JournalCodec = JSONJournalCodec()
) async -> Core<JournalBenchState, JournalBenchAction> {
  do {
    // No snapshots: every row measures records alone (a snapshot is one
    // more file written and synced).
    let journal = try FileJournal<JournalBenchState, JournalBenchAction>(
      directory: directory, durability: durability, snapshotEvery: nil, snapshotEveryBytes: nil, codec: codec)
    return try await Core(initialState: JournalBenchState(), journal: journal, reducer: Reduce(journalBenchReduce))
  } catch {
    fatalError("AsyncCoreBenchmarks: could not open a journal in \(directory): \(error)")
  }
}

/// A codec of the benchmark's own for `JournalBenchAction`: two
/// little-endian `Int64`s, with no framework in the way. It shows what the
/// journal costs once the codec costs next to nothing (the state, written
/// only in snapshots, falls back to JSON).
struct BinaryJournalBenchCodec: JournalCodec {
  struct NotAnAction: Error {}

  func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    guard let action = value as? JournalBenchAction else { return try JSONJournalCodec().encode(value) }
    switch action {
    case .deposit(let account, let amount):
      var bytes: [UInt8] = []
      bytes.reserveCapacity(16)
      withUnsafeBytes(of: Int64(account).littleEndian) { bytes.append(contentsOf: $0) }
      withUnsafeBytes(of: Int64(amount).littleEndian) { bytes.append(contentsOf: $0) }
      return bytes
    }
  }

  func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    guard type == JournalBenchAction.self else { return try JSONJournalCodec().decode(type, from: bytes) }
    guard bytes.count == 16 else { throw NotAnAction() }
    var fields: (Int64, Int64) = (0, 0)
    withUnsafeMutableBytes(of: &fields) { $0.copyBytes(from: bytes) }
    let action = JournalBenchAction.deposit(
      account: Int(Int64(littleEndian: fields.0)), amount: Int(Int64(littleEndian: fields.1)))
    guard let result = action as? T else { throw NotAnAction() }
    return result
  }
}

/// The frames the journal writes for `bodies` (length, CRC-32C, sequence,
/// time, body), one array each: what the raw baselines write. Their time
/// is a constant: the baselines time the disk, not the clock.
func journalFrames(_ bodies: [[UInt8]]) -> [[UInt8]] {
  bodies.enumerated().map { index, body in
    var frame: [UInt8] = []
    JournalFormat.appendFrame(sequence: UInt64(index + 1), time: 0, body: body, to: &frame)
    return frame
  }
}

/// Every body of `actions` as `codec` encodes it, or ends the run.
func encodeAll(_ actions: [JournalBenchAction], with codec: some JournalCodec) -> [[UInt8]] {
  do {
    return try actions.map { try codec.encode($0) }
  } catch {
    fatalError("AsyncCoreBenchmarks: the codec refused a benchmark action: \(error)")
  }
}
