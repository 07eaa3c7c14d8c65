import AsyncCore
import Synchronization

/// Fan-out latency: one dispatch, N observers each consuming in its own task;
/// the time until the first and until the last observer holds the new state.
func fanOutLatency(options: Options, report: Report) async {
  let observerCounts = options.quick ? [1, 100, 1_000] : [1, 10, 100, 1_000, 10_000]
  var rows: [[String]] = []
  for observers in observerCounts {
    let rounds = options.quick ? 30 : (observers >= 10_000 ? 60 : observers >= 1_000 ? 300 : 1_000)
    let blocks = options.rounds
    var samples: [FanOutDesign: [FanOutSample]] = [:]
    // The designs alternate in blocks, so that all see the same machine.
    for _ in 0..<blocks {
      for design in FanOutDesign.allCases {
        samples[design, default: []] += await Task.detached {
          await design.run(observers: observers, rounds: max(1, rounds / blocks))
        }.value
      }
    }
    let cellLast = percentile(samples[.sharedCell, default: []].map(\.last), 0.5)
    for design in FanOutDesign.allCases {
      let first = samples[design, default: []].map(\.first)
      let last = samples[design, default: []].map(\.last)
      rows.append(
        [
          "\(observers)", design.isBaseline ? "baseline: \(design.rawValue)" : "**\(design.rawValue)**",
          percentiles(first), percentiles(last),
          design == .sharedCell ? "" : "\(fixed(percentile(last, 0.5) / cellLast, 2))×",
        ])
      report.figures.append(
        Report.Figure(
          family: "fan-out", name: "\(design.rawValue), N=\(observers), last p50", unit: "seconds",
          median: percentile(last, 0.5), min: last.min() ?? 0, max: last.max() ?? 0))
    }
    let core = samples[.core, default: []].map(\.last)
    let cell = samples[.sharedCell, default: []].map(\.last)
    report.judge(
      "fan-out to \(grouped(observers)), last observer p50", requirement: "≤ 1.0 × shared cell",
      value: percentile(core, 0.5) / percentile(cell, 0.5), .atMost, 1.0,
      detail: formatDuration(percentile(core, 0.5)), why: fanOutWhy)
    report.judge(
      "fan-out to \(grouped(observers)), last observer p99", requirement: "≤ 1.5 × shared cell",
      value: percentile(core, 0.99) / percentile(cell, 0.99), .atMost, 1.5,
      detail: formatDuration(percentile(core, 0.99)), why: fanOutWhy)
  }
  report.add(
    Report.Table(
      title: "Fan-out latency: one dispatch until the first / last of N observers holds it",
      headers: ["N", "design", "first: p50 / p99 / p999", "last: p50 / p99 / p999", "last p50 vs shared cell"],
      rows: rows))
}

private let fanOutWhy =
  "observers of one key path share one read and comparison, but each keeps its own cell (its buffer, its "
  + "consumer's continuation, so observers can buffer differently), so publishing takes one lock and one resume "
  + "per observer where the shared cell takes one lock for all; each consumer's wait registers a cancellation "
  + "handler (what ends a cancelled consumer's loop at once), which the shared cell's waits do not; and with one "
  + "observer the figure includes the actor hop of `await dispatch`, where the shared cell's dispatch is a "
  + "synchronous call."

struct FanOutSample {
  let first: Double
  let last: Double
}

func percentiles(_ samples: [Double]) -> String {
  [0.5, 0.99, 0.999].map { formatDuration(percentile(samples, $0)) }.joined(separator: " / ")
}

func percentile(_ samples: [Double], _ fraction: Double) -> Double {
  let sorted = samples.sorted()
  guard !sorted.isEmpty else { return .nan }
  return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

enum FanOutDesign: String, CaseIterable, Sendable {
  case core = "Core (CoreStream, latest)"
  case sharedCell = "shared latest-value cell"
  case asyncStream = "1 AsyncStream per observer"

  var isBaseline: Bool { self != .core }

  func run(observers: Int, rounds: Int) async -> [FanOutSample] {
    let arrivals = Arrivals(expected: observers)
    switch self {
    case .core:
      let core = makeBenchCore()
      var consumers: [Task<Void, Never>] = []
      for _ in 0..<observers {
        let counts = await core.observe(\.count)
        consumers.append(Task.detached { for await count in counts { arrivals.arrive(with: count) } })
      }
      let samples = await timeRounds(rounds, arrivals: arrivals) { await dispatch(.increment, to: core) }
      await core.shutdown()
      for consumer in consumers { await consumer.value }
      return samples
    case .sharedCell:
      let store = SharedCellStore()
      var consumers: [Task<Int, Never>] = []
      for _ in 0..<observers { consumers.append(store.observe { arrivals.arrive(with: $0) }) }
      let samples = await timeRounds(rounds, arrivals: arrivals) { store.dispatch(.increment) }
      store.finish()
      for consumer in consumers { _ = await consumer.value }
      return samples
    case .asyncStream:
      let store = PlainActorStore()
      var consumers: [Task<Void, Never>] = []
      for _ in 0..<observers {
        let states = await store.states()
        consumers.append(Task.detached { for await state in states { arrivals.arrive(with: state.count) } })
      }
      let samples = await timeRounds(rounds, arrivals: arrivals) { await store.dispatch(.increment) }
      await store.finish()
      for consumer in consumers { await consumer.value }
      return samples
    }
  }
}

/// Counts observers reaching a target value and records when the first and
/// the last did.
final class Arrivals: Sendable {
  private struct Round {
    var target = 0
    var arrived = 0
    var first: ContinuousClock.Instant?
    var last: ContinuousClock.Instant?
    var waiter: CheckedContinuation<Void, Never>?
  }

  private let expected: Int
  private let round = Mutex(Round())

  init(expected: Int) {
    self.expected = expected
  }

  func start(target: Int) {
    round.withLock { $0 = Round(target: target) }
  }

  func arrive(with value: Int) {
    let now = ContinuousClock.now
    let waiter: CheckedContinuation<Void, Never>? = round.withLock { round in
      guard value == round.target else { return nil }
      round.arrived += 1
      if round.first == nil { round.first = now }
      guard round.arrived == expected else { return nil }
      round.last = now
      defer { round.waiter = nil }
      return round.waiter
    }
    waiter?.resume()
  }

  /// Waits until every observer has arrived; returns the first and last instants.
  func lastArrival() async -> (first: ContinuousClock.Instant, last: ContinuousClock.Instant) {
    await withCheckedContinuation { continuation in
      let done = round.withLock { round -> Bool in
        if round.last != nil { return true }
        round.waiter = continuation
        return false
      }
      if done { continuation.resume() }
    }
    return round.withLock { ($0.first ?? .now, $0.last ?? .now) }
  }
}

/// Each round: one dispatch, then wait until every observer holds its result.
private func timeRounds(
  _ rounds: Int, arrivals: Arrivals, dispatch: () async -> Void
) async -> [FanOutSample] {
  var samples: [FanOutSample] = []
  for round in 1...rounds {
    arrivals.start(target: round)
    let start = ContinuousClock.now
    await dispatch()
    let (first, last) = await arrivals.lastArrival()
    samples.append(FanOutSample(first: (first - start).seconds, last: (last - start).seconds))
  }
  return samples
}
