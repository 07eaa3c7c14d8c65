import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Under load: what the core's other callers see while producers flood
// `send`, and how fast the flood itself goes.
//
// Part 1, awaiting callers: 1, 2 or 8 producer tasks loop `core.send` for a
// fixed time while one prober task calls `await core.state` (or
// `try await core.dispatch`) every millisecond and times each call. The
// same prober on an idle core, in the same run, is the baseline; a second
// baseline keeps 8 tasks as busy on something else (a `Mutex` store of their
// own), which shows what the thread pool alone costs the prober. Each row
// also checks that every action sent was reduced, and reads the process's
// peak resident memory during the flood.
//
// Part 2, `send` throughput under a flood: 8 producers send a fixed number
// of actions each; actions per second until the state holds the last one
// (LoadThroughputBenchmarks.swift).
//
// Backpressure (a bounded mailbox) has no API yet, so nothing measures it
// here. When it lands, it joins this family as one more kind of flood:
// producers through the async send into a core of capacity C = 4,096, the
// peak resident growth printed beside its bound, C × (the action's size plus
// the queue's per-entry cost) + 1 MB, both read the way `FloodScenario`
// reads them (VmHWM after resetting it), and its send throughput judged
// against the unbounded mailbox's in the same rounds (≥ 0.8 ×).

/// The "under load" family: awaiting callers and `send` throughput while
/// producers flood `send`.
func underLoad(options: Options, report: Report) async {
  let flood: Duration = options.quick ? .milliseconds(100) : .seconds(1)
  await awaitingCallersUnderFlood(flood: flood, options: options, report: report)
  await sendThroughputUnderFlood(options: options, report: report)
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
      case .elsewhere: "baseline: idle core, \(scenario.producers) tasks busy elsewhere"
      }
    rows.append([
      producers,
      scenario.isIdle ? "—" : scenario.yields ? "every 1,000" : "never",
      "`\(scenario.probe.rawValue)`",
      grouped(result.latencies.count),
      formatDuration(percentile(result.latencies, 0.5)),
      formatDuration(p99),
      formatDuration(result.latencies.max() ?? .nan),
      formatDuration(result.longestStall),
      scenario.isIdle ? "" : "\(fixed(p99 / idleP99, 1))×",
      scenario.work == .send ? "\(formatCount(result.sent)) + \(grouped(result.dispatched))" : "—",
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
      title: "Under load: a caller awaiting the core while producers flood `send`",
      headers: [
        "producers", "producers yield", "awaiting call", "calls", "p50", "p99", "max", "longest stall", "p99 vs idle",
        "sent + dispatched", "= reduced", "peak RSS growth",
      ],
      rows: rows,
      notes: [
        "Each row is one flood of \(formatDuration(seconds)): the producers loop `core.send(.increment)` "
          + "until the flood ends, checking the clock every 1,000 sends; in the rows whose producers yield, "
          + "each also calls `Task.yield()` every 1,000 sends, so that the thread pool is not what keeps the "
          + "awaiting caller waiting. Meanwhile one task sleeps 1 ms, times one awaiting call, and again, "
          + "until the flood ends: *calls* is how many it completed (at most about "
          + "\(grouped(Int(seconds * 1_000))) in \(formatDuration(seconds))), and the percentiles are of "
          + "those calls alone, not of the sleeps. *Longest stall* is the longest time from when a call was "
          + "due (1 ms after the previous one returned) until it returned: the call, plus the time the "
          + "prober waited for a thread before it could make it. The baseline is the same task on a core "
          + "nobody else uses, in this run; the rows with 8 tasks busy elsewhere keep as many tasks running "
          + "the same loop on a `Mutex` store of their own, never touching the core: what the thread pool "
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
      yieldingP99: results[yielding].map { percentile($0.latencies, 0.99) })
  }
}

/// What the prober awaits.
enum LoadProbe: String, CaseIterable, Sendable {
  case state = "await core.state"
  case dispatch = "try await core.dispatch"
}

/// What the producers of a flood do.
enum FloodWork: Hashable, Sendable {
  /// Nothing: no producers, the idle core's baseline.
  case none
  /// Loop `core.send`.
  case send
  /// The same loop on a `Mutex` store of their own, never touching the
  /// core: what the thread pool alone costs the awaiting caller.
  case elsewhere
}

/// One flood: `producers` tasks sending (none for the idle baseline) while
/// a prober times one kind of awaiting call.
struct FloodScenario: Hashable, Sendable {
  let producers: Int
  let probe: LoadProbe
  /// Whether each producer yields every 1,000 sends.
  let yields: Bool
  var work = FloodWork.send

  static func idle(_ probe: LoadProbe) -> Self {
    FloodScenario(producers: 0, probe: probe, yields: false, work: .none)
  }

  var isIdle: Bool { work == .none }

  var name: String {
    let yielding = yields ? ", yielding every 1,000" : ""
    return switch work {
    case .none: "\(probe.rawValue), idle core"
    case .send: "\(probe.rawValue), \(producers)P flooding send\(yielding)"
    case .elsewhere: "\(probe.rawValue), idle core, \(producers)P busy elsewhere\(yielding)"
    }
  }

  func run(for flood: Duration) async -> FloodResult {
    let core = makeBenchCore()
    let peakWasReset = resetPeakResident()
    let before = statusBytes("VmRSS")
    let deadline = ContinuousClock.now + flood
    let probe = probe
    let prober = Task.detached { await Self.probe(core, with: probe, until: deadline) }
    let (yields, work) = (yields, work)
    let sent = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<producers {
        group.addTask {
          work == .send
            ? await Self.floodSend(core, until: deadline, yielding: yields)
            : await Self.keepBusy(until: deadline, yielding: yields)
        }
      }
      return await group.reduce(0, +)
    }
    let (latencies, longestStall) = await prober.value
    // Read before the backlog is reduced: the mailbox is at its largest.
    let peak = peakWasReset ? statusBytes("VmHWM") : nil
    let reduced = await core.state.count
    await core.shutdown()
    return FloodResult(
      latencies: latencies, longestStall: longestStall, sent: work == .send ? sent : 0,
      dispatched: probe == .dispatch ? latencies.count : 0, reduced: reduced,
      // The kernel counts resident pages per thread and folds them in
      // lazily: a growth under about a megabyte is noise, and can read
      // below zero.
      peakGrowth: peak.flatMap { peak in before.map { max(0, peak - $0) } })
  }

  /// Sends until `deadline`, looking at the clock every 1,000 sends; returns
  /// how many the core accepted.
  ///
  /// A producer that does not yield never suspends: it holds its thread
  /// until the deadline, as a tight loop in a service would.
  private static func floodSend(
    _ core: Core<BenchState, BenchAction>, until deadline: ContinuousClock.Instant, yielding: Bool
  ) async -> Int {
    var sent = 0
    while ContinuousClock.now < deadline {
      for _ in 0..<1_000 {
        if core.send(.increment) == .accepted { sent += 1 }
      }
      if yielding { await Task.yield() }
    }
    return sent
  }

  /// The same loop as `floodSend` on a store of this producer's own;
  /// returns 0 (nothing was sent to the core).
  private static func keepBusy(until deadline: ContinuousClock.Instant, yielding: Bool) async -> Int {
    let store = MutexStore()
    while ContinuousClock.now < deadline {
      for _ in 0..<1_000 { store.dispatch(.increment) }
      if yielding { await Task.yield() }
    }
    return 0
  }

  /// Every millisecond until `deadline`, one awaiting call, timed.
  private static func probe(
    _ core: Core<BenchState, BenchAction>, with probe: LoadProbe, until deadline: ContinuousClock.Instant
  ) async -> (latencies: [Double], longestStall: Double) {
    var latencies: [Double] = []
    latencies.reserveCapacity(2_000)
    var longestStall = 0.0
    while ContinuousClock.now < deadline {
      let due = ContinuousClock.now + .milliseconds(1)
      try? await Task.sleep(until: due)
      let start = ContinuousClock.now
      switch probe {
      case .state: blackHole(await core.state)
      case .dispatch: await dispatch(.increment, to: core)
      }
      let end = ContinuousClock.now
      latencies.append((end - start).seconds)
      longestStall = max(longestStall, (end - due).seconds)
    }
    return (latencies, longestStall)
  }
}

struct FloodResult: Sendable {
  /// Each awaiting call's duration, in seconds.
  let latencies: [Double]
  /// The longest time from when a call was due until it returned: the
  /// call, and before it the wait for a thread to run the prober on.
  let longestStall: Double
  /// Actions the producers' `send` calls accepted.
  let sent: Int
  /// Actions the prober dispatched.
  let dispatched: Int
  /// The count the state held once everyone was done.
  let reduced: Int
  /// Peak resident memory during the flood less resident memory before it;
  /// nil where the peak cannot be reset (not Linux).
  let peakGrowth: Int?
}

extension Report {
  /// The target for an awaiting caller under a flood: a p99 at most 20 × the
  /// idle core's p99, and under 2 ms.
  func judgeUnderFlood(_ figure: String, p99: Double, idleP99: Double, yieldingP99: Double?) {
    let ratio = p99 / idleP99
    // "Under 2 ms", judged on the figure printed with two decimals: 1.99 ms
    // is met, 2.00 ms is not.
    let met = meets(ratio, .atMost, 20, digits: 1) && meets(p99 * 1e3, .atMost, 1.99, digits: 2)
    targets.append(
      Target(
        figure: figure, requirement: "≤ 20 × the idle core's p99, and < 2 ms",
        measured: ratio.isFinite
          ? "\(fixed(ratio, 1))× (\(formatDuration(p99)); idle \(formatDuration(idleP99))"
            + (yieldingP99.map { "; producers yielding every 1,000: \(formatDuration($0))" } ?? "") + ")"
          : "no figure",
        verdict: met ? .met : .notMet, why: met ? "" : underFloodWhy))
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

// MARK: - Memory and formatting

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
