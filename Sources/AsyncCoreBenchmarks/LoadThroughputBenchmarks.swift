import AsyncCore

// The "under load" family's part 2 (see LoadBenchmarks.swift): `send`
// throughput while 8 producers flood, for the fair drain and the drain
// without slices, in the same interleaved rounds.

/// `send` throughput under an 8-producer flood: actions per second until
/// the state holds the last one.
func sendThroughputUnderFlood(options: Options, report: Report) async {
  let producers = 8
  let perProducer = options.quick ? 100_000 : 1_000_000
  let contenders = LoadDrain.allCases.map { drain in
    Contender.core("`send`, \(producers) producers, \(drain.rawValue)") {
      await drain.floodThroughput(producers: producers, perProducer: perProducer)
    }
  }
  let results = await runInterleaved(contenders, rounds: options.rounds)
  report.record("load", results)
  report.add(
    Report.Table(
      title: "Under load: `send` throughput, \(producers) producers flooding (actions per second)",
      headers: ["drain", "median", "min – max"],
      rows: results.map { [$0.name, formatRate($0.median), "\(formatRate($0.min)) – \(formatRate($0.max))"] },
      notes: [
        "Each producer sends \(grouped(perProducer)) actions back to back; the figure is the time until the "
          + "state holds the last of the \(grouped(producers * perProducer)). The fair drain reduces at most "
          + "\(grouped(LoadDrain.fairSlice)) queued actions per slice, then publishes and yields the core; "
          + "the drain without slices is the same core with its slice set to `Int.max` through the "
          + "benchmarks' hook (`setDrainSliceForBenchmarks`) before its first action: it yields only when "
          + "a take finds fewer than 64 actions or none, as the drain did before slices."
      ]))
  func medianRate(_ drain: LoadDrain) -> Double? {
    results.first { $0.name.hasSuffix(drain.rawValue) }?.median
  }
  let fair = medianRate(.fair) ?? .nan
  let unsliced = medianRate(.today) ?? .nan
  report.judge(
    "`send` throughput under an 8-producer flood, fair drain",
    requirement: "≥ 0.9 × the drain without slices, same run", value: fair / unsliced, .atLeast, 0.9,
    detail: "\(formatRate(fair)) against \(formatRate(unsliced))",
    why: fairDrainWhy)
}

/// Why the fair drain can fall short of the drain without slices, from
/// what was measured.
private let fairDrainWhy =
  "callgrind (`AsyncCoreProfile flood-fair` against `flood-unsliced`, 800,000 actions, a pure reducer) counts "
  + "3.2% more instructions for the fair drain, nearly all of them the pass that reverses the backlog when the "
  + "drain takes a batch larger than a slice (`MailboxBacklog.adopt`, about 5 instructions an action): a read "
  + "and a write of the whole backlog, tens of megabytes in this flood, which costs more in time than in "
  + "instructions. The rest is this machine's noise: the two drains' ranges overlap from round to round."

/// The drains the throughput table compares in the same rounds.
enum LoadDrain: String, CaseIterable, Sendable {
  /// The core as it ships: the drain reduces at most `Core.drainSlice`
  /// (16,384) queued actions, then publishes and yields.
  case fair = "fair drain (slice of 16,384)"
  /// The drain before slices: the same core with its slice set to
  /// `Int.max`, so it holds the core until the mailbox is empty, yielding
  /// only when a take finds a small batch (under 64) or none.
  case today = "drain without slices (`Int.max`)"

  /// The default slice, as `Core.drainSlice` (internal to AsyncCore) sets it.
  static let fairSlice = 16_384

  func makeCore() async -> Core<BenchState, BenchAction> {
    let core = makeBenchCore()
    switch self {
    case .fair: break
    case .today: await core.setDrainSliceForBenchmarks(Int.max)
    }
    return core
  }

  func floodThroughput(producers: Int, perProducer: Int) async -> Sample {
    let core = await makeCore()
    let total = producers * perProducer
    let sample = await measure(operations: total) {
      await withDiscardingTaskGroup { group in
        for _ in 0..<producers {
          group.addTask {
            for _ in 0..<perProducer { core.send(.increment) }
          }
        }
      }
      let reduced = await core.state.count
      if reduced != total {
        fatalError("AsyncCoreBenchmarks: \(total) actions sent, \(reduced) reduced")
      }
    }
    await core.shutdown()
    return sample
  }
}
