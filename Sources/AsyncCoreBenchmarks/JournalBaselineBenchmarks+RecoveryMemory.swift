import AsyncCore
import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Recovery memory (see JournalBaselineBenchmarks.swift): a child process,
// the benchmark's own executable started with a hidden first argument,
// opens a durable core on a journal of the family's recovery size, then
// reports its resident memory before opening and its peak. A process of
// its own, so that the peak is recovery's, not the benchmark's. The bound
// it is judged on: the state's encoded size and one drain slice of records.

/// The hidden first argument that makes the benchmark a recovery child:
/// `--recovery-child DIRECTORY`.
let recoveryChildArgument = "--recovery-child"

/// The drain's slice (`Core.drainSlice`, package to AsyncCore): the records
/// one journaled turn may hold, the unit of the recovery-memory bound.
let coreDrainSlice = 16_384

/// Opens a durable core of the journal family on the journal in
/// `arguments[0]`, every record replayed through recovery, and exits,
/// having written `records N peakRSS BYTES baselineRSS BYTES`: the records
/// replayed, `VmHWM` at the end and `VmRSS` before opening.
///
/// First it opens and closes a durable core on an empty journal beside
/// the directory, so that the code recovery runs (the core, the file
/// journal, the codec, the journal's queue thread) is loaded and the
/// figure is the memory the records cost; the peak is reset after it where
/// the kernel allows (`/proc/self/clear_refs`).
func recoveryChildMain(_ arguments: [String]) async -> Never {
  guard let directory = arguments.first else {
    print("\(recoveryChildArgument) takes a journal's directory")
    exit(2)
  }
  do {
    let warmUp = directory + "-warm-up"
    try await Task.detached { await (try await openRecoveryChildCore(warmUp)).shutdown() }.value
    resetPeakResidentMemory()
    let before = statusBytes("VmRSS") ?? 0
    let records = try await Task.detached {
      let core = try await openRecoveryChildCore(directory)
      blackHole(await core.state)
      let records = core.metrics.actionsReduced
      await core.shutdown()
      return records
    }.value
    print("records \(records) peakRSS \(statusBytes("VmHWM") ?? 0) baselineRSS \(before)")
    exit(0)
  } catch {
    print("\(recoveryChildArgument): could not open a durable core on \(directory): \(error)")
    exit(1)
  }
}

/// A durable core of the family's workload on a `FileJournal` in
/// `directory`, as the recovery rows open it.
private func openRecoveryChildCore(_ directory: String) async throws -> Core<JournalBenchState, JournalBenchAction> {
  let journal = try FileJournal<JournalBenchState, JournalBenchAction>(
    directory: directory, durability: .operatingSystem, snapshotEvery: nil, snapshotEveryBytes: nil)
  return try await Core(initialState: JournalBenchState(), journal: journal, reducer: Reduce(journalBenchReduce))
}

/// Resets `VmHWM` to the current resident memory (Linux 4.0 and later);
/// elsewhere the peak stays the process's own.
private func resetPeakResidentMemory() {
  guard let file = fopen("/proc/self/clear_refs", "w") else { return }
  fputs("5", file)
  fclose(file)
}

/// Starts a recovery child on the journal in `directory` and returns the
/// records it replayed, its peak resident memory (`VmHWM`) and its
/// resident memory before it opened the journal (to subtract); ends the
/// run when the child reports nothing.
func measureRecoveryPeak(directory: String) -> (records: Int, peakBytes: Int, baselineBytes: Int) {
  let output = runOwnExecutable([recoveryChildArgument, directory])
  let line = output.split(separator: "\n").last { $0.hasPrefix("records ") }
  let words = line?.split(separator: " ") ?? []
  func field(_ name: String) -> Int? {
    words.firstIndex { $0 == name }.flatMap { $0 + 1 < words.count ? Int(words[$0 + 1]) : nil }
  }
  guard let records = field("records"), let peak = field("peakRSS"), let baseline = field("baselineRSS") else {
    fatalError("AsyncCoreBenchmarks: the recovery child on \(directory) reported nothing:\n\(output)")
  }
  return (records, peak, baseline)
}

/// A journal of the family's recovery size, no snapshot, opened by a child
/// process as a durable core: its table, its figures and its target.
func recoveryMemory(plan: JournalBenchPlan, report: Report) async {
  let count = plan.recoveryRecords
  // One period of bodies repeated, as the recovery rows write them.
  let periodActions = journalBenchActions(journalBenchPeriod)
  let period = encodeAll(periodActions, with: JSONJournalCodec())
  let scratch = ScratchDirectory("recovery-memory")
  defer { scratch.remove() }
  let directory = scratch.path + "/journal"
  let bytes = writeRecoveryJournal((0..<count).map { period[$0 % period.count] }, to: directory)
  let measured = measureRecoveryPeak(directory: directory)
  if measured.records != count {
    fatalError("AsyncCoreBenchmarks: the recovery child replayed \(measured.records) of \(count) records")
  }
  let growth = measured.peakBytes - measured.baselineBytes
  // The bound: the final state as the codec encodes it (what a snapshot
  // would hold) and one drain slice of records of the journal's average
  // size on disk (frame and body).
  let finalState = journalBenchReference((0..<count).map { periodActions[$0 % periodActions.count] })
  let stateBytes: Int
  do {
    stateBytes = try JSONJournalCodec().encode(finalState).count
  } catch {
    fatalError("AsyncCoreBenchmarks: JSONJournalCodec refused the benchmark's state: \(error)")
  }
  let recordBytes = Double(bytes) / Double(count)
  let sliceBytes = Int((Double(coreDrainSlice) * recordBytes).rounded())
  let bound = 2 * (stateBytes + sliceBytes)
  report.add(
    Report.Table(
      title: "Journal: recovery memory of \(grouped(count)) records, no snapshot (a child process)",
      headers: ["reader", "records", "RSS before opening", "peak RSS (VmHWM)", "peak − before", "per record"],
      rows: [
        [
          JournalBaselineRow.recoveryMemory, grouped(measured.records), formatBytes(measured.baselineBytes),
          formatBytes(measured.peakBytes), formatBytes(growth), "\(fixed(Double(growth) / Double(count), 2)) B",
        ]
      ],
      notes: [
        "The journal holds \(grouped(count)) records of the workload's JSON deposits, "
          + "\(fixed(Double(bytes) / 1e6, 1)) MB in its segment (\(fixed(recordBytes, 1)) bytes a record), "
          + "written through `Journal.append` in batches of 10,000 with `.operatingSystem` durability. A child "
          + "process (this benchmark, started with `\(recoveryChildArgument) DIR`) first opens and shuts down a "
          + "durable core on an empty journal (so the code recovery runs is loaded), resets its peak and reads "
          + "its `VmRSS`, then opens a durable `Core` on a `FileJournal` of the directory (`FileJournal` checks "
          + "every record at its open, keeping none, and hands them to the core \(grouped(4_096)) a batch; the "
          + "file layer reads 1 MiB chunks) and reports its `VmHWM` once `init` has returned and the state "
          + "is read: *peak − before* is what recovery held at once."
      ]))
  report.figures += [
    Report.Figure(
      family: "journal", name: "recovery memory, peak − before (\(JournalBaselineRow.recoveryMemory))",
      unit: "bytes", median: Double(growth), min: Double(growth), max: Double(growth)),
    Report.Figure(
      family: "journal", name: "recovery memory, peak (\(JournalBaselineRow.recoveryMemory))", unit: "bytes",
      median: Double(measured.peakBytes), min: Double(measured.peakBytes), max: Double(measured.peakBytes)),
  ]
  report.judge(
    "journal, recovery memory of \(grouped(count)) records (peak − before)",
    requirement: "≤ 2 × (state + one slice of records)", value: Double(growth) / Double(bound / 2), .atMost, 2,
    detail: "\(formatBytes(growth)) against a bound of \(formatBytes(bound)) = 2 × (\(stateBytes) B state + "
      + "\(grouped(coreDrainSlice)) × \(fixed(recordBytes, 1)) B records)",
    why: recoveryMemoryWhy)
}

/// Why recovery's peak can pass its bound, from what was measured.
private let recoveryMemoryWhy =
  "the peak does not grow with the journal (the same at 100,000 and 1,000,000 records: no record is kept), but "
  + "its parts pass the bound: read in the child, `FileJournal`'s open alone adds about 2.3 MB, the file layer's "
  + "1 MiB chunk buffer and its successor, both held while the buffer is replaced (FrameScanner.hold) and kept "
  + "by malloc afterwards; the replay adds about 1.3 MB more, a second scanner's buffers, a batch of 4,096 "
  + "records each with a body array of its own and their decoded actions. Two 1 MiB buffers at once are the "
  + "bound's whole budget, so the lever is the read buffer: refill one buffer in place (move the unread tail "
  + "down) instead of allocating the next beside it, or read smaller chunks"
