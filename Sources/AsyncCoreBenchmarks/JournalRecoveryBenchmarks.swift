import AsyncCore
import AsyncCoreJournal

// The "journal" family's part 2 (see JournalBenchmarks.swift): recovery.
// A journal of 1M records (100,000 with --quick), no snapshot, is written
// once through the file layer with `.operatingSystem` durability; each round
// opens a durable `Core` on a `FileJournal` of it (read, checksum, decode,
// reduce: until `init` returns) and, as the baseline, decodes the same
// encoded bodies, held in memory, with the same codec and reduces them in a
// plain loop.

/// Recovery of the journal against decode + reduce in a plain loop.
func journalRecovery(plan: JournalBenchPlan, report: Report) async {
  let count = plan.recoveryRecords
  let actions = journalBenchActions(count)
  let expected = journalBenchReference(actions)
  let codec = JSONJournalCodec()
  // The deposits repeat with a period of 97,000 (1,000 accounts, 97
  // amounts): encode one period and repeat its bodies, the same bytes the
  // codec gives each action, in a tenth of the time.
  let period = encodeAll(Array(actions.prefix(journalBenchPeriod)), with: codec)
  let bodies = (0..<count).map { period[$0 % period.count] }
  let scratch = ScratchDirectory("recovery")
  defer { scratch.remove() }
  let directory = scratch.path + "/journal"
  let bytes = writeRecoveryJournal(bodies, to: directory)

  let contenders: [Contender] = [
    .baseline(RecoveryRow.baseline) {
      await measure(operations: count) {
        var state = JournalBenchState()
        do {
          for body in bodies { journalBenchReduce(&state, try codec.decode(JournalBenchAction.self, from: body)) }
        } catch {
          fatalError("AsyncCoreBenchmarks: JSONJournalCodec could not decode its own bytes: \(error)")
        }
        if state != expected { fatalError("AsyncCoreBenchmarks: the decode + reduce baseline lost an action") }
      }
    },
    .core(RecoveryRow.open) {
      var opened: Core<JournalBenchState, JournalBenchAction>?
      let sample = await measure(operations: count) {
        opened = await openJournalBenchCore(directory, durability: .operatingSystem)
      }
      guard let core = opened else { fatalError("AsyncCoreBenchmarks: no durable core was opened") }
      let state = await core.state
      let replayed = core.metrics.actionsReduced
      await core.shutdown()
      if state != expected || replayed != count {
        fatalError("AsyncCoreBenchmarks: recovery replayed \(replayed) of \(count) records into a wrong state")
      }
      return sample
    },
    .core(RecoveryRow.fileLayer) {
      let identity = JournalIdentity(
        action: JournalBenchAction.self, state: JournalBenchState.self, schemaVersion: 1)
      var opened: (journal: Journal, recovered: JournalRecovery)?
      let sample = await measure(operations: count) {
        do {
          opened = try Journal.open(directory: directory, identity: identity, durability: .operatingSystem)
        } catch {
          fatalError("AsyncCoreBenchmarks: could not open the recovery journal: \(error)")
        }
      }
      guard let (journal, recovered) = opened, recovered.recordCount == count else {
        fatalError("AsyncCoreBenchmarks: the file layer did not find \(count) records")
      }
      journal.close()
      return sample
    },
  ]
  let results = await runInterleaved(contenders, rounds: plan.recoveryRounds)
  report.record("journal", results)
  let baseline = results.first { $0.isBaseline }?.median ?? .nan
  let recovery = results.first { $0.name == RecoveryRow.open }?.median ?? .nan
  let fileLayer = results.first { $0.name == RecoveryRow.fileLayer }?.median ?? .nan
  report.add(
    Report.Table(
      title: "Journal: recovery of \(grouped(count)) actions (records per second)",
      headers: ["design", "median", "min – max", "time", "ratio"],
      rows: results.map { result in
        [
          result.isBaseline ? "baseline: \(result.name)" : "**\(result.name)**", formatRate(result.median),
          "\(formatRate(result.min)) – \(formatRate(result.max))",
          formatDuration(Double(count) / result.median),
          result.isBaseline ? "" : "\(fixed(baseline / result.median, 2))× the baseline's time",
        ]
      },
      notes: [
        "The journal holds \(grouped(count)) records, \(fixed(Double(bytes) / 1e6, 1)) MB in one segment, and no "
          + "snapshot: it is written once, through `Journal.append` in batches of 10,000 with `.operatingSystem` "
          + "durability and one `sync()` at the end, and the round opens it (one round: each row is seconds of "
          + "JSON decoding), "
          + "so its pages are in the operating system's cache: this is recovery's CPU cost, not a cold disk's. "
          + "*Open* is the time until `Core(initialState:journal:reducer:)` returns on a `FileJournal` of the "
          + "directory: `Journal.open` (lock, read the segment in 1 MiB chunks, check each record's CRC-32C and "
          + "sequence, keep none), then the core asks the journal for the records \(grouped(4_096)) at a time, "
          + "and each batch is read and checked again, decoded with `JSONJournalCodec` into an array and "
          + "replayed; then the state is checked and the core shut down, untimed. *The file layer alone* is "
          + "`Journal.open` on the same directory: the first of those two reads, before any decoding. The "
          + "baseline decodes the same \(grouped(count)) bodies, already in memory, with the same codec and "
          + "reduces them in a plain loop."
      ]))
  report.judge(
    "journal, recovery of \(grouped(count)) actions (until `init` returns)",
    requirement: "≤ 2 × decode + reduce in a plain loop", value: baseline / recovery, .atMost, 2,
    detail: "\(formatDuration(Double(count) / recovery)) against \(formatDuration(Double(count) / baseline)); "
      + "the file layer alone \(formatDuration(Double(count) / fileLayer))",
    why: "on top of the decode and reduce the baseline does, recovery reads and checks the segment twice: once "
      + "when `FileJournal` opens the journal (the file layer alone: \(formatDuration(Double(count) / fileLayer))), "
      + "keeping no record so that memory stays bounded, and once more as the core takes the records a batch at "
      + "a time, each copied into an array of its own before it is decoded. The lever is one read: a cursor "
      + "that the open leaves at the first record, so the check and the replay share a pass.")
}

/// The rows of the recovery table.
enum RecoveryRow {
  static let baseline = "decode + reduce in a plain loop"
  static let open = "a durable `Core` opened on a `FileJournal` (recovery)"
  static let fileLayer = "the file layer alone: `Journal.open` (every record read and checked, none kept)"
}

/// Writes `bodies` as the records of a new journal in `directory`; returns
/// the bytes of its segment (headers and frames).
func writeRecoveryJournal(_ bodies: [[UInt8]], to directory: String) -> Int {
  let identity = JournalIdentity(action: JournalBenchAction.self, state: JournalBenchState.self, schemaVersion: 1)
  do {
    let (journal, _) = try Journal.open(directory: directory, identity: identity, durability: .operatingSystem)
    var start = 0
    while start < bodies.count {
      let end = min(start + 10_000, bodies.count)
      try journal.append(Array(bodies[start..<end]))
      start = end
    }
    try journal.sync()
    journal.close()
  } catch {
    fatalError("AsyncCoreBenchmarks: could not write the recovery journal: \(error)")
  }
  return bodies.reduce(0) { $0 + $1.count + JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes }
}
