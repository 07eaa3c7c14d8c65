import AsyncCore

/// Selectors: 1,000 observers on one core, of which none, 1% or all see their
/// props change with each action; what an unchanged observer costs the core
/// per publication against a raw loop of the same selector and comparison,
/// and against a changed observer. Each operation is one `dispatch` and one
/// read of `state`, which publishes what the dispatch left (dispatches
/// coalesce their publications), so each is exactly one publication.
/// Observers with closure selectors each evaluate their own (the judged
/// figure); observers of one key path share one evaluation.
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
  let sharing = ((perAction[SelectorScenario.noneChangeKeyPath.rawValue] ?? 0) - empty) / Double(observers)
  // The raw loop's time per action includes its reducer, a few ns against
  // 1,000 selector calls: left in, it only flatters the core.
  let raw = (perAction[rawLoop] ?? 0) / Double(observers)
  report.add(
    Report.Table(
      title: "Selectors: 1,000 observers, one publication per `await dispatch` + `await state`",
      headers: ["observers whose props change", "actions per second", "min – max", "time per action"],
      rows: results.map {
        [
          $0.name, formatRate($0.median), "\(formatRate($0.min)) – \(formatRate($0.max))",
          formatDuration(1 / $0.median),
        ]
      },
      notes: [
        "Per observer: unchanged \(formatDuration(unchanged)) with its own closure selector, "
          + "\(formatDuration(max(0, sharing))) sharing one key path, changed \(formatDuration(changed)) "
          + "(time per publication beyond the core with no observers, divided by 1,000); the raw loop of the "
          + "same selector and comparison \(formatDuration(raw))."
      ]))
  report.judge(
    "observer whose props did not change (1,000 sharing a key path)", requirement: "≤ 2 × raw selector loop",
    value: max(0, sharing) / raw, .atMost, 2,
    detail: "\(formatDuration(max(0, sharing))) vs \(formatDuration(raw)); own closure selectors: "
      + "\(formatDuration(unchanged)), \(fixed(unchanged / raw, 2))×",
    why: "observers of one key path share one read and one comparison per publication, so each costs a share "
      + "of one. An observer with a closure selector evaluates its own: a call through its entry, its selector "
      + "and a comparison through closures, touching three heap objects, where the raw loop calls one closure "
      + "and compares two integers in place.")
}

struct SelectorState: Sendable {
  var count = 0
  var buckets = [Int](repeating: 0, count: 100)
  let constant = 0
}

enum SelectorScenario: String, CaseIterable, Sendable {
  case noObservers = "no observers"
  case noneChange = "none (0%), closure selectors"
  case noneChangeKeyPath = "none (0%), one key path"
  case onePercent = "1% (10 of 1,000)"
  case allChange = "all (100%)"

  func measure(observers: Int, actions: Int) async -> Sample {
    let core = Core<SelectorState, Int>(
      initialState: SelectorState(),
      reducer: Reduce { state, bucket in
        state.count += 1
        state.buckets[bucket] += 1
      })
    var consumers: [Task<Void, Never>] = []
    let watched = self == .noObservers ? 0 : observers
    for index in 0..<watched {
      let stream: CoreStream<Int> =
        switch self {
        case .noObservers, .noneChange: await core.observe { $0.constant }
        case .noneChangeKeyPath: await core.observe(\.constant)
        case .onePercent: await core.observe { [bucket = index % 100] in $0.buckets[bucket] }
        case .allChange: await core.observe { $0.count }
        }
      consumers.append(Task.detached { for await value in stream { blackHole(value) } })
    }
    let sample = await AsyncCoreBenchmarks.measure(operations: actions) {
      for action in 0..<actions {
        do { try await core.dispatch(action % 100) } catch { fatalError("\(error)") }
        blackHole(await core.state.count)
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
