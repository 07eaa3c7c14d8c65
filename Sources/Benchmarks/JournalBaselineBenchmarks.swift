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
// - recovery memory: the peak resident memory of a child process that opens
//   a journal of 1M records and reads them
//   (JournalBaselineBenchmarks+RecoveryMemory.swift).
//
// Each is a function returning its figure, so that a row of the durable
// core can run it as a contender beside its own and judge the ratio.

/// The journal family's baselines for a durable core.
func journalBaselines(plan: JournalBenchPlan, report: Report) async {
  let actions = journalBenchActions(plan.records)
  let frames = journalFrames(encodeAll(actions, with: JSONJournalCodec()))
  let frameBytes = Double(frames.reduce(0) { $0 + $1.count }) / Double(frames.count)
  let sqliteMissing = sqliteUnavailableReason()
  if let sqliteMissing { print("SQLite rows skipped: \(sqliteMissing)") }

  var syncing: [Contender] = [
    .baseline(JournalBaselineRow.rawSync) { rawPerRecordSync(frames, for: plan.timed) }
  ]
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
  let streaming: [Contender] = [.baseline(JournalBaselineRow.binaryLoop) { binaryCodecLoop(actions) }]
  let results =
    await runInterleaved(syncing, rounds: plan.syncRounds) + runInterleaved(streaming, rounds: plan.rounds)
  report.record("journal", results)
  func rate(_ name: String) -> Double { results.first { $0.name == name }?.median ?? .nan }

  let raw = rate(JournalBaselineRow.rawSync)
  let oneRow = rate(JournalBaselineRow.sqlite(rowsPerTransaction: 1))
  let sixteenRows = rate(JournalBaselineRow.sqlite(rowsPerTransaction: 16))
  let sqliteNote =
    sqliteMissing.map { "The SQLite rows were skipped: \($0)." }
    ?? "SQLite \(sqliteVersion()) (the system's libsqlite3), a new database per round: `journal_mode=WAL`, "
    + "`synchronous=FULL`, one table `records(id INTEGER PRIMARY KEY, body BLOB NOT NULL)`, `BEGIN`, `INSERT` and "
    + "`COMMIT` prepared once, each row a journal frame as its blob and the next id bound; the default "
    + "checkpoints run as they fall. One row per transaction commits at \(fixed(oneRow / raw, 2))× the raw "
    + "sync; 16 rows per transaction insert \(fixed(sixteenRows / oneRow, 1))× the rows of one."
  report.add(
    Report.Table(
      title: "Journal: baselines for a durable core (the same disk, this run)",
      headers: ["baseline", "median", "min – max", "per record", "why it is the baseline"],
      rows: results.map { result in
        [
          result.name, formatRate(result.median), "\(formatRate(result.min)) – \(formatRate(result.max))",
          formatDuration(1 / result.median), JournalBaselineRow.why(result.name),
        ]
      },
      notes: [
        "Every row writes into a new directory under the temporary directory, as the journal rows do. The raw "
          + "and SQLite rows run for \(formatDuration(plan.timed.seconds)) each, in \(plan.syncRounds) interleaved "
          + "rounds; their records are the journal's JSON frames of the workload's deposits, "
          + "\(fixed(frameBytes, 1)) bytes each. " + sqliteNote,
        "The binary-codec loop encodes \(grouped(actions.count)) deposits with `BinaryJournalBenchCodec` (a "
          + "concrete type, no existential), frames each as the journal does (length, CRC-32C, sequence, time), "
          + "writes the frames in `write`s of \(formatBytes(binaryLoopBufferBytes)) into a file set up as a "
          + "segment and ends with one `fdatasync`, all timed, in "
          + "\(plan.rounds) round\(plan.rounds == 1 ? "" : "s"): what `.interval` with "
          + "that codec must do, without a core.",
      ]))

  await recoveryMemory(plan: plan, report: report)
}

/// The rows of the baselines' table, and why each is a baseline.
enum JournalBaselineRow {
  static let rawSync = "raw `write` + `fdatasync` per record, 1 producer"
  static let binaryLoop = "binary codec, buffered sequential `write`s, one final `fdatasync`"
  static let recoveryMemory = "the file layer: `Journal.open`, every record read"

  static func sqlite(rowsPerTransaction rows: Int) -> String {
    "SQLite WAL, `synchronous=FULL`, \(rows) row\(rows == 1 ? "" : "s") per transaction"
  }

  static func why(_ row: String) -> String {
    switch row {
    case rawSync: "the disk's cost of one durable action, with nothing around it"
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

// MARK: - Recovery memory

/// A journal of the family's recovery size, no snapshot, opened by a child
/// process; its table and figures.
private func recoveryMemory(plan: JournalBenchPlan, report: Report) async {
  let count = plan.recoveryRecords
  // One period of bodies repeated, as the recovery rows write them.
  let period = encodeAll(journalBenchActions(journalBenchPeriod), with: JSONJournalCodec())
  let scratch = ScratchDirectory("recovery-memory")
  defer { scratch.remove() }
  let directory = scratch.path + "/journal"
  let bytes = writeRecoveryJournal((0..<count).map { period[$0 % period.count] }, to: directory)
  let measured = measureRecoveryPeak(directory: directory)
  if measured.records != count {
    fatalError("AsyncCoreBenchmarks: the recovery child read \(measured.records) of \(count) records")
  }
  let growth = measured.peakBytes - measured.baselineBytes
  report.add(
    Report.Table(
      title: "Journal: recovery memory of \(grouped(count)) records, no snapshot (a child process)",
      headers: ["reader", "records", "RSS before opening", "peak RSS (VmHWM)", "peak − before", "per record"],
      rows: [
        [
          JournalBaselineRow.recoveryMemory, grouped(measured.records), formatBytes(measured.baselineBytes),
          formatBytes(measured.peakBytes), formatBytes(growth), "\(fixed(Double(growth) / Double(count), 1)) B",
        ]
      ],
      notes: [
        "The journal holds \(grouped(count)) records of the workload's JSON deposits, "
          + "\(fixed(Double(bytes) / 1e6, 1)) MB in its segment, written through `Journal.append` in batches of "
          + "10,000 with `.operatingSystem` durability. A child process (this benchmark, started with "
          + "`\(recoveryChildArgument) DIR`) reads its `VmRSS` before anything else, calls `Journal.open` and "
          + "reads every record, and reports its `VmHWM`: *peak − before* is what recovery held at once, the "
          + "figure a durable core's recovery is judged on against its state and one slice of records."
      ]))
  report.figures += [
    Report.Figure(
      family: "journal", name: "recovery memory, peak − before (\(JournalBaselineRow.recoveryMemory))",
      unit: "bytes", median: Double(growth), min: Double(growth), max: Double(growth)),
    Report.Figure(
      family: "journal", name: "recovery memory, peak (\(JournalBaselineRow.recoveryMemory))", unit: "bytes",
      median: Double(measured.peakBytes), min: Double(measured.peakBytes), max: Double(measured.peakBytes)),
  ]
}
