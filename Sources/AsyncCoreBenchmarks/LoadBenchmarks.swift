import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Under load: what the core's other callers see while producers flood
// `send` or `enqueue`, and how fast the flood itself goes.
//
// Part 1, awaiting callers: 1, 2 or 8 producer tasks loop `core.send` for a
// fixed time while one prober task calls `await core.state` (or
// `try await core.dispatch`) every millisecond and times each call. The
// same prober on an idle core, in the same run, is the baseline; a second
// baseline keeps 8 tasks as busy on something else (a `Mutex` store of their
// own), which shows what the thread pool alone costs the prober. One more
// flood has 8 producers loop `try await core.enqueue` into a core whose
// mailbox holds at most 4,096 actions: backpressure, where a producer
// suspends while the mailbox is full. Each row also checks that every
// action sent was reduced, and reads the process's peak resident memory
// during the flood (the floods themselves: LoadFloodScenario.swift).
//
// Part 2, `send` throughput under a flood: 8 producers send a fixed number
// of actions each; actions per second until the state holds the last one,
// the fair drain against the drain without slices
// (LoadThroughputBenchmarks.swift).
//
// Part 3, backpressure: 8 producers `enqueue` a fixed number of actions
// each into a bounded mailbox (capacity 4,096, and 64) and an unbounded
// one; throughput against the unbounded mailbox, and the peak resident
// growth against the bound (LoadBackpressureBenchmarks.swift).

/// The "under load" family: awaiting callers, `send` throughput and
/// backpressure while producers flood the core.
func underLoad(options: Options, report: Report) async {
  let flood: Duration = options.quick ? .milliseconds(100) : .seconds(1)
  await awaitingCallersUnderFlood(flood: flood, options: options, report: report)
  await sendThroughputUnderFlood(options: options, report: report)
  await enqueueUnderFlood(options: options, report: report)
}

// MARK: - Part 1: awaiting callers under a flood

private func awaitingCallersUnderFlood(flood: Duration, options: Options, report: Report) async {
  // The idle baselines first, on a heap no flood has grown yet.
  var scenarios = LoadProbe.allCases.map(FloodScenario.idle)
  for yields in [false, true] {
    for probe in LoadProbe.allCases {
      for producers in [1, 2, 8] {
        scenarios.append(FloodScenario(producers: producers, probe: probe, yields: yields))
      }
      // The thread pool's share: as many busy tasks, none touching the core.
      scenarios.append(FloodScenario(producers: 8, probe: probe, yields: yields, work: .elsewhere))
    }
  }
  // Backpressure: the producers suspend while the mailbox is full. The
  // target is judged at capacity 4,096; 64 shows what the capacity costs.
  for capacity in [FloodScenario.judgedCapacity, 64] {
    for probe in LoadProbe.allCases {
      scenarios.append(FloodScenario(producers: 8, probe: probe, yields: false, work: .enqueue(capacity: capacity)))
    }
  }
  var results: [FloodScenario: FloodResult] = [:]
  for scenario in scenarios {
    results[scenario] = await Task.detached { await scenario.run(for: flood) }.value
  }

  func idle(_ probe: LoadProbe) -> FloodResult? {
    results[FloodScenario.idle(probe)]
  }
  var rows: [[String]] = []
  for scenario in scenarios {
    guard let result = results[scenario] else { continue }
    let idleP99 = idle(scenario.probe).map { percentile($0.latencies, 0.99) } ?? .nan
    let p99 = percentile(result.latencies, 0.99)
    let producers =
      switch scenario.work {
      case .none: "baseline: idle core"
      case .send: "\(scenario.producers)"
      case .enqueue(let capacity): "\(scenario.producers), `enqueue` into capacity \(grouped(capacity))"
      case .elsewhere: "baseline: idle core, \(scenario.producers) tasks busy elsewhere"
      }
    let yields =
      switch scenario.work {
      case .none: "—"
      case .enqueue: "waits while full"
      case .send, .elsewhere: scenario.yields ? "every 1,000" : "never"
      }
    rows.append([
      producers,
      yields,
      "`\(scenario.probe.rawValue)`",
      grouped(result.latencies.count),
      formatDuration(percentile(result.latencies, 0.5)),
      formatDuration(p99),
      formatDuration(result.latencies.max() ?? .nan),
      formatDuration(result.longestStall),
      scenario.isIdle
        ? "—" : "\(formatCount(median(result.queuedAhead))) / \(formatCount(result.queuedAhead.max() ?? 0))",
      scenario.isIdle ? "" : "\(fixed(p99 / idleP99, 1))×",
      scenario.work.touchesCore ? "\(formatCount(result.sent)) + \(grouped(result.dispatched))" : "—",
      result.reduced == result.sent + result.dispatched ? "yes" : "**no** (\(formatCount(result.reduced)))",
      result.peakGrowth.map(formatBytes) ?? "n/a",
    ])
    report.figures += [
      Report.Figure(
        family: "load", name: "\(scenario.name), p50", unit: "seconds",
        median: percentile(result.latencies, 0.5), min: result.latencies.min() ?? .nan,
        max: result.latencies.max() ?? .nan),
      Report.Figure(
        family: "load", name: "\(scenario.name), p99", unit: "seconds", median: p99,
        min: result.latencies.min() ?? .nan, max: result.latencies.max() ?? .nan),
    ]
  }
  let seconds = flood.seconds
  report.add(
    Report.Table(
      title: "Under load: a caller awaiting the core while producers flood `send` or `enqueue`",
      headers: [
        "producers", "producers yield", "awaiting call", "calls", "p50", "p99", "max", "longest stall",
        "queued at the call, p50 / max", "p99 vs idle",
        "sent + dispatched", "= reduced", "peak RSS growth",
      ],
      rows: rows,
      notes: [
        "Each row is one flood of \(formatDuration(seconds)): the producers loop `core.send(.increment)` "
          + "until the flood ends, checking the clock every 1,000 sends; in the rows whose producers yield, "
          + "each also calls `Task.yield()` every 1,000 sends, so that the thread pool is not what keeps the "
          + "awaiting caller waiting. In the rows with `enqueue`, the producers loop `try await "
          + "core.enqueue(.increment)` into a core made with the `mailboxCapacity` shown, "
          + "checking the clock every 1,000 calls: each suspends while the mailbox is full, and never yields "
          + "otherwise. Meanwhile one task sleeps 1 ms, times one awaiting call, and again, "
          + "until the flood ends: *calls* is how many it completed (at most about "
          + "\(grouped(Int(seconds * 1_000))) in \(formatDuration(seconds))), and the percentiles are of "
          + "those calls alone, not of the sleeps. *Longest stall* is the longest time from when a call was "
          + "due (1 ms after the previous one returned) until it returned: the call, plus the time the "
          + "prober waited for a thread before it could make it. *Queued at the call* is "
          + "`core.metrics.queueDepth` read just before each call: the actions accepted and not yet reported "
          + "reduced, which the call waits for (a batch the drain holds) or reduces itself. The baseline is "
          + "the same task on a core nobody else uses, in this run; the rows with 8 tasks busy elsewhere keep "
          + "as many tasks running the same loop on a `Mutex` store of their own, never touching the core: what the thread pool "
          + "alone costs the prober. *Sent + dispatched = reduced* reads the state once the producers "
          + "and the prober are done. *Peak RSS growth* is the process's VmHWM at the end of the flood (reset "
          + "through /proc/self/clear_refs before it) less VmRSS before it: the mailbox's growth, mostly (the "
          + "kernel's count is approximate: under a megabyte is noise)."
      ]))

  // An accepted action that was never reduced is a bug in the core, not a
  // figure: fail the run (and CI's smoke run) after printing the table.
  let lost = scenarios.filter { results[$0].map { $0.reduced != $0.sent + $0.dispatched } ?? false }
  if !lost.isEmpty {
    fatalError("AsyncCoreBenchmarks: actions accepted but not reduced in: \(lost.map(\.name))")
  }

  // Judged on producers that never yield, as the target is stated;
  // the yielding producers' p99 is shown beside it.
  for probe in LoadProbe.allCases {
    let flooded = FloodScenario(producers: 8, probe: probe, yields: false)
    let yielding = FloodScenario(producers: 8, probe: probe, yields: true)
    guard let result = results[flooded], let idle = idle(probe) else { continue }
    report.judgeUnderFlood(
      "`\(probe.rawValue)` under an 8-producer `send` flood, p99",
      p99: percentile(result.latencies, 0.99), idleP99: percentile(idle.latencies, 0.99),
      aside: results[yielding].map {
        "producers yielding every 1,000: \(formatDuration(percentile($0.latencies, 0.99)))"
      },
      why: underFloodWhy)
  }
  // The reader's target on an unbounded mailbox: producers that yield, so
  // the thread pool is not what keeps the reader waiting.
  for probe in LoadProbe.allCases {
    let yielding = FloodScenario(producers: 8, probe: probe, yields: true)
    guard let result = results[yielding] else { continue }
    let p99 = percentile(result.latencies, 0.99)
    let growth = result.peakGrowth.map(Double.init) ?? .nan
    let met =
      meets(p99 * 1e3, .atMost, 9.99, digits: 2)
      && meets(growth / 1_048_576, .atMost, Double(floodGrowthBoundMiB), digits: 1)
    report.targets.append(
      Report.Target(
        figure: "`\(probe.rawValue)` under an 8-producer `send` flood yielding every 1,000, unbounded mailbox",
        requirement: "p99 < 10 ms, peak RSS growth ≤ \(floodGrowthBoundMiB) MiB",
        measured: "p99 \(formatDuration(p99)), peak RSS growth \(result.peakGrowth.map(formatBytes) ?? "n/a"); "
          + "queued at the call: max \(formatCount(result.queuedAhead.max() ?? 0)); "
          + "\(formatCount(result.sent)) sent",
        verdict: met ? .met : .notMet, why: met ? "" : yieldingFloodWhy))
  }
  // With backpressure: the producers suspend whenever the mailbox is full.
  for probe in LoadProbe.allCases {
    let capacity = FloodScenario.judgedCapacity
    let flooded = FloodScenario(producers: 8, probe: probe, yields: false, work: .enqueue(capacity: capacity))
    let small = FloodScenario(producers: 8, probe: probe, yields: false, work: .enqueue(capacity: 64))
    guard let result = results[flooded], let idle = idle(probe) else { continue }
    report.judgeUnderFlood(
      "`\(probe.rawValue)` under an 8-producer `enqueue` flood, capacity \(grouped(capacity)), p99",
      p99: percentile(result.latencies, 0.99), idleP99: percentile(idle.latencies, 0.99),
      aside: "p50 \(formatDuration(percentile(result.latencies, 0.5))), \(grouped(result.latencies.count)) calls; "
        + "queued at the call: p50 \(grouped(median(result.queuedAhead))), "
        + "max \(grouped(result.queuedAhead.max() ?? 0)); "
        + "reduced during each of the slowest 1%: \(grouped(result.samples.reducedDuringSlowest))"
        + (results[small].map {
          "; capacity 64: p50 \(formatDuration(percentile($0.latencies, 0.5))), "
            + "p99 \(formatDuration(percentile($0.latencies, 0.99)))"
        } ?? ""),
      why: underEnqueueFloodWhy)
  }
}

extension Report {
  /// The target for an awaiting caller under a flood: a p99 at most 20 × the
  /// idle core's p99, and under 2 ms. `aside` follows the figures in the
  /// measured column.
  func judgeUnderFlood(_ figure: String, p99: Double, idleP99: Double, aside: String?, why: String) {
    let ratio = p99 / idleP99
    // "Under 2 ms", judged on the figure printed with two decimals: 1.99 ms
    // is met, 2.00 ms is not.
    let met = meets(ratio, .atMost, 20, digits: 1) && meets(p99 * 1e3, .atMost, 1.99, digits: 2)
    targets.append(
      Target(
        figure: figure, requirement: "≤ 20 × the idle core's p99, and < 2 ms",
        measured: ratio.isFinite
          ? "\(fixed(ratio, 1))× (\(formatDuration(p99)); idle \(formatDuration(idleP99))"
            + (aside.map { "; \($0)" } ?? "") + ")"
          : "no figure",
        verdict: met ? .met : .notMet, why: met ? "" : why))
  }
}

private let underFloodWhy =
  "8 producers that never suspend outnumber the global executor's threads (one per core) and hold them all "
  + "until the flood ends, so the awaiting task, and the drain, run only then: one call per flood (the row with 8 tasks busy elsewhere "
  + "stalls as long, for a call of a microsecond). That one call then reduces the whole backlog the drain "
  + "could not (millions to tens of millions of actions, up to hundreds of megabytes), because `state` and `dispatch` reduce "
  + "everything pending before they answer. A fairer drain changes neither part; what bounds this figure is "
  + "the backlog a flood can build, so a bounded mailbox (an opt-in capacity) or a call that does not reduce "
  + "other tasks' sends first is what can bring it down. With producers that yield every 1,000 sends (the "
  + "figure in parentheses) the thread pool costs the call about a microsecond (the rows with 8 tasks busy "
  + "elsewhere); the rest of that figure is the core's."

/// What "RSS bounded" means for the yielding flood: a mailbox that stays
/// within a megabyte of entries, with room for the kernel's approximate count.
private let floodGrowthBoundMiB = 16

private let yieldingFloodWhy =
  "every awaiting call first reduces, or waits for, every action any task had sent before it (that is what lets "
  + "a task that sent, or that awaited tasks that sent, read their writes), so the call waits as long as the "
  + "queue the flood has built, and on an unbounded mailbox nothing bounds that queue: the producers are faster "
  + "than the one reducer. Measured with callgrind (a 48-byte state, actions without payload): reducing a queued "
  + "action costs about 110 instructions (the reducer, then destroying the queue's entry through its generic "
  + "value witness and a retain and release of its optional lineage), sending one about 60. Eight producers "
  + "that fill both threads, one reducing task, and each action costing the reducer more than its sender: no "
  + "scheduling of the drain keeps up (a drain that took turns of up to 20 ms, and one that never yielded, were "
  + "tried: the first still fell behind, the second kept up but kept every reader out). What bounds the figure is "
  + "backpressure, an opt-in `mailboxCapacity` with `enqueue` (the rows above: the same reader, a queue of at most "
  + "the capacity and under a megabyte of growth), or producers the reducer outpaces"

/// Why an awaiting caller can miss its target under an `enqueue` flood,
/// from what was measured.
private let underEnqueueFloodWhy =
  "a call finds the mailbox full (*queued at the call*: 4,096 at the median) and, before it answers, reduces "
  + "those 4,096 actions and resumes the senders it admits: that is the p50 (40–50 µs here; 3–4 µs at capacity "
  + "64), so 20 × an idle p99 of about a microsecond is out of reach at this capacity by construction. The "
  + "slowest 1% (one to a few milliseconds) each waited through refills of the mailbox: while each waited, the "
  + "core reduced two or three full mailboxes (8,200 or 12,300 actions; the figure in parentheses), and the "
  + "mailbox was full again when it returned. After each batch the drain admits the waiting senders and yields, "
  + "which puts the core, and the call waiting on it, behind the resumed producers in the executor's queue; they "
  + "run until the mailbox is full again. With room, `enqueue` costs what `send` does (callgrind, "
  + "`AsyncCoreProfile enqueue` against `send`: about 610 instructions an action each); a refill costs a task "
  + "wake-up per waiting producer on top."

// MARK: - Memory and formatting

/// The median of `values`; 0 for none.
func median(_ values: [Int]) -> Int {
  values.isEmpty ? 0 : values.sorted()[values.count / 2]
}

/// Resets the process's peak resident memory (VmHWM) to its current
/// resident memory; false where that is not possible.
func resetPeakResident() -> Bool {
  guard let file = fopen("/proc/self/clear_refs", "w") else { return false }
  defer { fclose(file) }
  return fputs("5", file) >= 0
}

/// A memory field of /proc/self/status ("VmRSS", "VmHWM"), in bytes.
func statusBytes(_ field: String) -> Int? {
  guard let status = readFile("/proc/self/status") else { return nil }
  let line = status.split(separator: "\n").first { $0.hasPrefix("\(field):") }
  guard let kilobytes = line?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
  return kilobytes * 1_024
}

/// A count of actions: 199,342,000 → "199.3M".
func formatCount(_ value: Int) -> String {
  switch value {
  case 1_000_000...: "\(fixed(Double(value) / 1e6, 1))M"
  case 10_000...: "\(fixed(Double(value) / 1e3, 1))k"
  default: grouped(value)
  }
}

/// Bytes, in the largest unit that keeps a whole number in front.
func formatBytes(_ value: Int) -> String {
  let magnitude = abs(Double(value))
  return switch magnitude {
  case 1_073_741_824...: "\(fixed(Double(value) / 1_073_741_824, 2)) GiB"
  case 1_048_576...: "\(fixed(Double(value) / 1_048_576, 1)) MiB"
  case 1_024...: "\(fixed(Double(value) / 1_024, 0)) KiB"
  default: "\(value) B"
  }
}
