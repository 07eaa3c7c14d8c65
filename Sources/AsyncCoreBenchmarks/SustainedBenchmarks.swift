import AsyncCore
import Synchronization

/// Sustained fan-out: 100 observers, actions sent back to back; actions per
/// second until every observer holds the final state, and how many states
/// each observer received on the way.
func sustainedFanOut(options: Options, report: Report) async {
  let observers = 100
  let base = options.quick ? 20_000 : 100_000
  let received = Mutex<[String: [Int]]>([:])
  func contender(_ name: String, baseline: Bool, _ run: @escaping @Sendable () async -> (Sample, [Int])) -> Contender {
    let measure: @Sendable () async -> Sample = {
      let (sample, counts) = await run()
      received.withLock { $0[name] = counts }
      return sample
    }
    return baseline ? .baseline(name, measure) : .core(name, measure)
  }
  let contenders = [
    contender("Core, latest observers (send)", baseline: false) {
      await coreSustained(observers: observers, actions: base, policy: .latest)
    },
    contender("Core, .all observers (send)", baseline: false) {
      await coreSustained(observers: observers, actions: base / 5, policy: .all)
    },
    contender("shared latest-value cell", baseline: true) {
      await sharedCellSustained(observers: observers, actions: base)
    },
    contender("1 AsyncStream per observer, newest 1", baseline: true) {
      await asyncStreamSustained(observers: observers, actions: base / 20, policy: .bufferingNewest(1))
    },
    contender("1 AsyncStream per observer, unbounded (every state)", baseline: true) {
      await asyncStreamSustained(observers: observers, actions: base / 20, policy: .unbounded)
    },
  ]
  let results = await runInterleaved(contenders, rounds: options.quick ? 2 : 5)
  report.record("sustained", results)
  let counts = received.withLock { $0 }
  let median = Dictionary(uniqueKeysWithValues: results.map { ($0.name, $0.median) })
  let comparedWith = [
    "Core, latest observers (send)": "shared latest-value cell",
    "Core, .all observers (send)": "1 AsyncStream per observer, unbounded (every state)",
  ]
  report.add(
    Report.Table(
      title: "Sustained fan-out: \(observers) observers, actions back to back, until all hold the final state",
      headers: [
        "design", "actions per second", "min – max", "ratio", "states per observer (last round: mean, min – max)",
      ],
      rows: results.map { result in
        let states = counts[result.name] ?? []
        let mean = states.isEmpty ? 0 : states.reduce(0, +) / states.count
        return [
          result.isBaseline ? "baseline: \(result.name)" : "**\(result.name)**", formatRate(result.median),
          "\(formatRate(result.min)) – \(formatRate(result.max))",
          comparedWith[result.name].flatMap { baseline in
            median[baseline].map { "\(fixed(result.median / $0, 2))× \(baseline)" }
          } ?? "",
          "\(mean), \(states.min() ?? 0) – \(states.max() ?? 0)",
        ]
      }))
  report.judge(
    "100 observers, actions until all hold the final state", requirement: "≥ 1.0 × shared cell",
    value: (median["Core, latest observers (send)"] ?? 0) / (median["shared latest-value cell"] ?? 1), .atLeast, 1.0,
    why: "each drained batch publishes to every observer through its own cell and lock; the shared cell "
      + "publishes once for all of them.")
  report.judge(
    "every-state (`.all`) observers, 100 observers", requirement: "≥ 10 × one AsyncStream per observer",
    value: (median["Core, .all observers (send)"] ?? 0)
      / (median["1 AsyncStream per observer, unbounded (every state)"] ?? 1), .atLeast, 10,
    why: "every state still reaches every observer's queue, and each queue wakes its consumer.")
}

/// Consumers that count what they receive until the count reaches `target`.
private func countingConsumers(
  _ streams: [CoreStream<Int>], until target: Int
) -> [Task<Int, Never>] {
  streams.map { stream in
    Task.detached {
      var received = 0
      for await count in stream {
        received += 1
        if count >= target { break }
      }
      return received
    }
  }
}

func coreSustained(observers: Int, actions: Int, policy: BufferingPolicy) async -> (Sample, [Int]) {
  let core = makeBenchCore()
  var streams: [CoreStream<Int>] = []
  for _ in 0..<observers { streams.append(await core.observe(\.count, buffering: policy)) }
  let consumers = countingConsumers(streams, until: actions)
  streams = []
  var counts: [Int] = []
  let sample = await measure(operations: actions) {
    for _ in 0..<actions { core.send(.increment) }
    for consumer in consumers { counts.append(await consumer.value) }
  }
  await core.shutdown()
  return (sample, counts)
}

func sharedCellSustained(observers: Int, actions: Int) async -> (Sample, [Int]) {
  let store = SharedCellStore()
  let done = Arrivals(expected: observers)
  done.start(target: actions)
  var consumers: [Task<Int, Never>] = []
  for _ in 0..<observers { consumers.append(store.observe { done.arrive(with: $0) }) }
  let sample = await measure(operations: actions) {
    for _ in 0..<actions { store.dispatch(.increment) }
    _ = await done.lastArrival()
  }
  store.finish()
  var counts: [Int] = []
  for consumer in consumers { counts.append(await consumer.value) }
  return (sample, counts)
}

func asyncStreamSustained(
  observers: Int, actions: Int, policy: AsyncStream<BenchState>.Continuation.BufferingPolicy
) async -> (Sample, [Int]) {
  let store = PlainActorStore()
  var consumers: [Task<Int, Never>] = []
  for _ in 0..<observers {
    let states = await store.states(bufferingPolicy: policy)
    consumers.append(
      Task.detached {
        var received = 0
        for await state in states {
          received += 1
          if state.count >= actions { break }
        }
        return received
      })
  }
  var counts: [Int] = []
  let sample = await measure(operations: actions) {
    for _ in 0..<actions { await store.dispatch(.increment) }
    for consumer in consumers { counts.append(await consumer.value) }
  }
  await store.finish()
  return (sample, counts)
}
