import AsyncCore
import Synchronization

/// Fan-out latency: one dispatch, N observers each consuming in its own task;
/// the time until the last observer holds the new state.
///
/// Compares AsyncCore's `CoreStream` with the plain design, one `AsyncStream`
/// (newest value only) per observer: the measurement behind `CoreStream`
/// being the primary observation API.
func fanOutLatency(options: Options) async -> [FanOutResult] {
  let observerCounts = options.quick ? [1, 100] : [1, 100, 1_000]
  let rounds = options.quick ? 30 : 200
  var results: [FanOutResult] = []
  for observers in observerCounts {
    var coreSamples: [Double] = []
    var baselineSamples: [Double] = []
    // Alternate the two designs in blocks so that both see the same machine.
    for _ in 0..<options.rounds {
      coreSamples += await Task.detached { await coreFanOut(observers: observers, rounds: rounds / options.rounds) }
        .value
      baselineSamples += await Task.detached {
        await asyncStreamFanOut(observers: observers, rounds: rounds / options.rounds)
      }.value
    }
    results.append(FanOutResult(observers: observers, core: coreSamples, baseline: baselineSamples))
  }
  return results
}

struct FanOutResult {
  let observers: Int
  /// Seconds until the last observer held the new state, one per round.
  let core: [Double]
  let baseline: [Double]
}

func percentile(_ samples: [Double], _ fraction: Double) -> Double {
  let sorted = samples.sorted()
  return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// Counts observers reaching a target value and records when the last did.
final class Arrivals: Sendable {
  private struct Round {
    var target = 0
    var arrived = 0
    var lastArrival: ContinuousClock.Instant?
    var waiter: CheckedContinuation<ContinuousClock.Instant, Never>?
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
    let waiter: CheckedContinuation<ContinuousClock.Instant, Never>? = round.withLock { round in
      guard value == round.target else { return nil }
      round.arrived += 1
      guard round.arrived == expected else { return nil }
      round.lastArrival = now
      defer { round.waiter = nil }
      return round.waiter
    }
    waiter?.resume(returning: now)
  }

  /// The instant the last observer arrived.
  func lastArrival() async -> ContinuousClock.Instant {
    await withCheckedContinuation { continuation in
      let done: ContinuousClock.Instant? = round.withLock { round in
        if let lastArrival = round.lastArrival { return lastArrival }
        round.waiter = continuation
        return nil
      }
      if let done { continuation.resume(returning: done) }
    }
  }
}

func coreFanOut(observers: Int, rounds: Int) async -> [Double] {
  let core = makeBenchCore()
  let arrivals = Arrivals(expected: observers)
  var consumers: [Task<Void, Never>] = []
  for _ in 0..<observers {
    let counts = await core.observe(\.count)
    consumers.append(Task.detached { for await count in counts { arrivals.arrive(with: count) } })
  }
  let samples = await timeRounds(rounds, arrivals: arrivals) { await dispatch(.increment, to: core) }
  await core.shutdown()
  for consumer in consumers { await consumer.value }
  return samples
}

func asyncStreamFanOut(observers: Int, rounds: Int) async -> [Double] {
  let store = PlainActorStore()
  let arrivals = Arrivals(expected: observers)
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

/// Each round: one dispatch, then wait until every observer holds its result.
private func timeRounds(
  _ rounds: Int, arrivals: Arrivals, dispatch: () async -> Void
) async -> [Double] {
  var samples: [Double] = []
  for round in 1...rounds {
    arrivals.start(target: round)
    let start = ContinuousClock.now
    await dispatch()
    samples.append((await arrivals.lastArrival() - start).seconds)
  }
  return samples
}
