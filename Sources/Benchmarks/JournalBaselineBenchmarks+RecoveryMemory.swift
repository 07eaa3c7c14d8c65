import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The journal baselines' recovery memory (see JournalBaselineBenchmarks.swift):
// a child process, the benchmark's own executable started with a hidden
// first argument, opens a journal and reads its records, then reports its
// resident memory before opening and its peak. A process of its own, so
// that the peak is recovery's, not the benchmark's.

/// The hidden first argument that makes the benchmark a recovery child:
/// `--recovery-child DIRECTORY`.
let recoveryChildArgument = "--recovery-child"

/// Opens the journal in `arguments[0]` with the journal family's identity,
/// reads every record and exits, having written
/// `records N peakRSS BYTES baselineRSS BYTES` on standard output: the
/// records read, `VmHWM` at the end and `VmRSS` before opening.
func recoveryChildMain(_ arguments: [String]) -> Never {
  guard let directory = arguments.first else {
    print("\(recoveryChildArgument) takes a journal's directory")
    exit(2)
  }
  let before = statusBytes("VmRSS") ?? 0
  let identity = JournalIdentity(action: JournalBenchAction.self, state: JournalBenchState.self, schemaVersion: 1)
  var records = 0
  var bodyBytes = 0
  do {
    let (journal, recovered) = try Journal.open(
      directory: directory, identity: identity, durability: .operatingSystem)
    for record in recovered.records {
      records += 1
      bodyBytes &+= record.body.count
    }
    journal.close()
  } catch {
    print("\(recoveryChildArgument): could not open \(directory): \(error)")
    exit(1)
  }
  blackHole(bodyBytes)
  print("records \(records) peakRSS \(statusBytes("VmHWM") ?? 0) baselineRSS \(before)")
  exit(0)
}

/// Starts a recovery child on the journal in `directory` and returns the
/// records it read, its peak resident memory (`VmHWM`) and its resident
/// memory before it opened the journal (the process's own, to subtract);
/// ends the run when the child reports nothing.
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
