import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The "journal" family's baselines for a durable core, measured on the
// same disk (the family's scratch directories) in the same run as the rows
// they judge:
//
// - raw `write` + `fdatasync` of one record at a time (`rawPerRecordSync`,
//   JournalBenchmarks+Files.swift), what one durable action costs the disk;
// - SQLite in WAL mode with `synchronous=FULL`, one row and 16 rows per
//   transaction (JournalBaselineBenchmarks+SQLite.swift);
// - the binary codec in a plain loop: encode, frame, buffered sequential
//   writes, one `fdatasync` at the end (`binaryCodecLoop`);
// - recovery memory's bound: the state's encoded size and one drain slice
//   of records, against which a child process's peak resident memory while
//   it opens a durable core on 1M records is judged
//   (JournalBaselineBenchmarks+RecoveryMemory.swift).
//
// Each is a function returning its figure, so that a row of the durable
// core runs it as a contender beside its own, in the same rounds, and
// judges the ratio (JournalBenchmarks.swift).

/// The journal family's baselines for a durable core as contenders: the
/// ones that sync per record or per transaction (timed, run with the
/// `.everyAction` rows) and the one that streams (run with `.interval`).
/// No SQLite contender when `sqliteMissing` says why SQLite cannot run.
func journalBaselineContenders(
  actions: [JournalBenchAction], frames: [[UInt8]], plan: JournalBenchPlan, sqliteMissing: String?
) -> (syncing: [Contender], streaming: [Contender]) {
  var syncing: [Contender] = []
  if sqliteMissing == nil {
    for rows in [1, 16] {
      syncing.append(
        .baseline(JournalBaselineRow.sqlite(rowsPerTransaction: rows)) {
          // A failure after the probe succeeded was printed; the row then
          // reads 0/s rather than ending the run.
          sqliteCommits(frames, rowsPerTransaction: rows, for: plan.timed)
            ?? Sample(operations: 0, duration: plan.timed)
        })
    }
  }
  return (syncing, [.baseline(JournalBaselineRow.binaryLoop) { binaryCodecLoop(actions) }])
}

/// The note on the SQLite rows and the binary-codec loop, for the table
/// of baselines.
func journalBaselineNotes(
  rate: (String) -> Double, actions: Int, plan: JournalBenchPlan, sqliteMissing: String?
) -> [String] {
  let raw = rate(JournalRow.rawPerRecord)
  let oneRow = rate(JournalBaselineRow.sqlite(rowsPerTransaction: 1))
  let sixteenRows = rate(JournalBaselineRow.sqlite(rowsPerTransaction: 16))
  let sqliteNote =
    sqliteMissing.map { "The SQLite rows were skipped: \($0)." }
    ?? "SQLite \(sqliteVersion()) (the system's libsqlite3), a new database per round, runs in the same rounds as "
    + "the per-record row: `journal_mode=WAL`, `synchronous=FULL`, one table `records(id INTEGER PRIMARY KEY, body "
    + "BLOB NOT NULL)`, `BEGIN`, `INSERT` and `COMMIT` prepared once, each row a journal frame as its blob and the "
    + "next id bound; the default checkpoints run as they fall. One row per transaction commits at "
    + "\(fixed(oneRow / raw, 2))× the raw sync; 16 rows per transaction insert \(fixed(sixteenRows / oneRow, 1))× "
    + "the rows of one."
  return [
    sqliteNote,
    "The binary-codec loop encodes \(grouped(actions)) deposits with `BinaryJournalBenchCodec` (a "
      + "concrete type, no existential), frames each as the journal does (length, CRC-32C, sequence, time), "
      + "writes the frames in `write`s of \(formatBytes(binaryLoopBufferBytes)) into a file set up as a "
      + "segment and ends with one `fdatasync`, all timed, in \(plan.rounds) round\(plan.rounds == 1 ? "" : "s") "
      + "interleaved with the `.interval` rows: what `.interval` with that codec must do, without a core.",
  ]
}

/// The rows of the baselines' table, and why each is a baseline.
enum JournalBaselineRow {
  static let binaryLoop = "binary codec, buffered sequential `write`s, one final `fdatasync`"
  static let recoveryMemory = "a durable `Core` opened on a `FileJournal` (recovery, until `init` returns)"

  static func sqlite(rowsPerTransaction rows: Int) -> String {
    "SQLite WAL, `synchronous=FULL`, \(rows) row\(rows == 1 ? "" : "s") per transaction"
  }

  static func why(_ row: String) -> String {
    switch row {
    case JournalRow.rawPerRecord: "the disk's cost of one durable action, with nothing around it"
    case JournalRow.rawSequential, JournalRow.rawSequentialBinary: "the disk's sequential limit"
    case JournalRow.encode, JournalRow.decode: "the codec's cost apart from the disk"
    case sqlite(rowsPerTransaction: 1): "a durable one-row commit from a mature database, 1 producer"
    case sqlite(rowsPerTransaction: 16): "a durable commit of 16 rows at once, what group commit is judged on"
    case binaryLoop: "the least `.interval` durability with the binary codec can cost"
    default: ""
    }
  }
}

/// The size of each `write` of ``binaryCodecLoop(_:)``.
let binaryLoopBufferBytes = 64 << 10

/// Encodes `actions` with `BinaryJournalBenchCodec`, frames them as the
/// journal does into a buffer written each time it holds
/// ``binaryLoopBufferBytes``, into a new file, and syncs once at the end:
/// every step timed. Operations are actions.
func binaryCodecLoop(_ actions: [JournalBenchAction]) -> Sample {
  let scratch = ScratchDirectory("binary-loop")
  defer { scratch.remove() }
  let file = openLikeASegment(in: scratch.path)
  defer { close(file) }
  let codec = BinaryJournalBenchCodec()
  var buffer: [UInt8] = []
  buffer.reserveCapacity(binaryLoopBufferBytes + 256)
  let clock = ContinuousClock()
  let start = clock.now
  do {
    for (index, action) in actions.enumerated() {
      let body = try codec.encode(action)
      // Time 0, as `journalFrames` writes it: the loop times the codec and
      // the disk, not the clock.
      JournalFormat.appendFrame(sequence: UInt64(index + 1), time: 0, body: body, to: &buffer)
      if buffer.count >= binaryLoopBufferBytes {
        writeAll(file, buffer)
        buffer.removeAll(keepingCapacity: true)
      }
    }
  } catch {
    fatalError("AsyncCoreBenchmarks: BinaryJournalBenchCodec refused an action: \(error)")
  }
  writeAll(file, buffer)
  syncData(file)
  return Sample(operations: actions.count, duration: clock.now - start)
}
