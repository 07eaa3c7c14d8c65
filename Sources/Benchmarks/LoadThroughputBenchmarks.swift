import AsyncCore

// The "under load" family's part 2 (see LoadBenchmarks.swift): `send`
// throughput while 8 producers flood, for each drain the benchmark can
// select, in the same interleaved rounds.

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
          + "state holds the last of the \(grouped(producers * perProducer)). The fair drain joins this table, "
          + "in the same rounds, once the switch that selects it exists (see `LoadDrain`)."
      ]))
  // TODO(fair drain): once `LoadDrain.fair` exists, replace this row with
  // `report.judge(…, value: fair median / today's median, .atLeast, 0.9, …)`.
  let today = results.first { $0.name.hasSuffix(LoadDrain.today.rawValue) }
  report.notMeasured(
    "`send` throughput under an 8-producer flood, fair drain",
    requirement: "≥ 0.9 × today's drain, same run",
    why: "the fair drain and the switch that lets this benchmark run it beside today's drain are not in this "
      + "build; today's drain measured \(today.map { formatRate($0.median) } ?? "nothing") (the throughput "
      + "table under load).")
}

/// The drains the throughput table compares in the same rounds.
enum LoadDrain: String, CaseIterable, Sendable {
  /// Holds the core until the mailbox is empty, yielding every 4,096
  /// actions.
  case today = "today's drain"

  // TODO(fair drain): the drain that reduces a bounded slice and then lets
  // the core's other callers in is selected by a switch
  // only the benchmark sets, or by its slice set to unbounded. When it
  // lands, add its case here (`case fair = "fair drain"`) and make
  // `makeCore()` set that switch for it (and, for `.today`, the slice to
  // unbounded if that is how today's drain is kept), so both run in the
  // same interleaved rounds.

  func makeCore() -> Core<BenchState, BenchAction> {
    switch self {
    case .today: makeBenchCore()
    }
  }

  func floodThroughput(producers: Int, perProducer: Int) async -> Sample {
    let core = makeCore()
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
