import AsyncCore

/// Selectors: 1,000 observers on one core, of which none, 1% or all see their
/// props change with each action; what an unchanged observer costs the core
/// against a raw loop of the same selector and comparison, and against a
/// changed observer.
func selectorCost(options: Options, report: Report) async {
  let actions = options.quick ? 300 : 2_000
  let observers = 1_000
  let rawLoop = "raw selector loop (baseline, unchanged props)"
  let contenders: [Contender] =
    [.baseline(rawLoop) { rawSelectorLoop(observers: observers, actions: actions * 10) }]
    + SelectorScenario.allCases.map { scenario in
      .core(scenario.rawValue) { await scenario.measure(observers: observers, actions: actions) }
    }
  let results = await runInterleaved(contenders, rounds: options.rounds)
  report.record("selectors", results)
  let perAction = Dictionary(uniqueKeysWithValues: results.map { ($0.name, 1 / $0.median) })
  let empty = perAction[SelectorScenario.noObservers.rawValue] ?? 0
  let unchanged = ((perAction[SelectorScenario.noneChange.rawValue] ?? 0) - empty) / Double(observers)
  let changed = ((perAction[SelectorScenario.allChange.rawValue] ?? 0) - empty) / Double(observers)
  // The raw loop's time per action includes its reducer, a few ns against
  // 1,000 selector calls: left in, it only flatters the core.
  let raw = (perAction[rawLoop] ?? 0) / Double(observers)
  report.add(
    Report.Table(
      title: "Selectors: 1,000 observers, `await dispatch`",
      headers: ["observers whose props change", "actions per second", "min – max", "time per action"],
      rows: results.map {
        [
          $0.name, formatRate($0.median), "\(formatRate($0.min)) – \(formatRate($0.max))",
          formatDuration(1 / $0.median),
        ]
      },
      notes: [
        "Per observer: unchanged \(formatDuration(unchanged)), changed \(formatDuration(changed)) "
          + "(time per dispatch beyond the core with no observers, divided by 1,000); the raw loop of the same "
          + "selector and comparison \(formatDuration(raw))."
      ]))
  report.judge(
    "observer whose props did not change", requirement: "≤ 2 × raw selector loop",
    value: unchanged / raw, .atMost, 2, detail: "\(formatDuration(unchanged)) vs \(formatDuration(raw))",
    why: "an unchanged observer costs a call through its subscription's publish closure, its selector and an "
      + "`Equatable` comparison through the generic props type, with no lock; the raw loop calls the selector "
      + "and compares two integers in place. Walking 1,000 subscriptions (one heap object each) adds cache "
      + "misses the loop over two arrays does not have. Grouping observers that share a selector would evaluate "
      + "it once.")
}

struct SelectorState: Sendable {
  var count = 0
  var buckets = [Int](repeating: 0, count: 100)
  let constant = 0
}

enum SelectorScenario: String, CaseIterable, Sendable {
  case noObservers = "no observers"
  case noneChange = "none (0%)"
  case onePercent = "1% (10 of 1,000)"
  case allChange = "all (100%)"

  func measure(observers: Int, actions: Int) async -> Sample {
    let core = Core<SelectorState, Int>(initialState: SelectorState()) { state, bucket in
      state.count += 1
      state.buckets[bucket] += 1
    }
    var consumers: [Task<Void, Never>] = []
    let watched = self == .noObservers ? 0 : observers
    for index in 0..<watched {
      let stream: CoreStream<Int> =
        switch self {
        case .noObservers, .noneChange: await core.observe { $0.constant }
        case .onePercent: await core.observe { [bucket = index % 100] in $0.buckets[bucket] }
        case .allChange: await core.observe { $0.count }
        }
      consumers.append(Task.detached { for await value in stream { blackHole(value) } })
    }
    let sample = await AsyncCoreBenchmarks.measure(operations: actions) {
      for action in 0..<actions {
        do { try await core.dispatch(action % 100) } catch { fatalError("\(error)") }
      }
    }
    await core.shutdown()
    for consumer in consumers { await consumer.value }
    return sample
  }
}

/// The baseline for an unchanged observer: the same selector as the core's
/// observers in the "none" scenario, called for each of `observers` after
/// every action and compared with the last value each one saw.
func rawSelectorLoop(observers: Int, actions: Int) -> Sample {
  // One closure value per observer, called through the array as the core
  // calls each subscription's.
  var selectors: [@Sendable (SelectorState) -> Int] = []
  for _ in 0..<observers { selectors.append { $0.constant } }
  var last = [Int](repeating: -1, count: observers)
  var state = SelectorState()
  let clock = ContinuousClock()
  let start = clock.now
  var changes = 0
  for action in 0..<actions {
    state.count += 1
    state.buckets[action % 100] += 1
    for index in 0..<observers {
      let value = selectors[index](state)
      if value != last[index] {
        last[index] = value
        changes += 1
      }
    }
  }
  let duration = clock.now - start
  blackHole((changes, last))
  return Sample(operations: actions, duration: duration)
}
