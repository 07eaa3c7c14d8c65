import AsyncCore
import Synchronization

/// Dispatch throughput: `send` and `await dispatch`, from 1 and 8 producers,
/// with 0, 1, 100 and 1,000 observers of each policy, beside the baselines.
func dispatchThroughput(options: Options, report: Report) async {
  let base = options.quick ? 100_000 : 1_000_000
  var contenders: [Contender] = [
    .baseline("raw reducer loop (the limit)") {
      await measure(operations: base) {
        var state = BenchState()
        for _ in 0..<base { benchReduce(&state, .increment) }
        blackHole(state)
      }
    },
    .baseline("Mutex store, 0 callbacks") {
      let store = MutexStore()
      return await measure(operations: base) {
        for _ in 0..<base { store.dispatch(.increment) }
      }
    },
    .baseline("Mutex store, 1 callback (every state)") {
      let latest = LatestCount()
      let store = MutexStore(callbacks: [{ latest.store($0.count) }])
      return await measure(operations: base) {
        for _ in 0..<base { store.dispatch(.increment) }
      }
    },
    .baseline("plain actor, await dispatch, 0 observers") {
      let store = PlainActorStore()
      return await measure(operations: base) {
        for _ in 0..<base { await store.dispatch(.increment) }
      }
    },
    .baseline("plain actor, await dispatch, 8 producers, 0 observers") {
      // A tenth of the actions: eight producers on two cores run about ten
      // times slower than one, and only the rate is compared.
      let perProducer = base / 80
      let store = PlainActorStore()
      return await measure(operations: perProducer * 8) {
        await withDiscardingTaskGroup { group in
          for _ in 0..<8 {
            group.addTask {
              for _ in 0..<perProducer { await store.dispatch(.increment) }
            }
          }
        }
      }
    },
    .baseline("plain actor, await dispatch, 1 AsyncStream observer") {
      let actions = base / 10
      let store = PlainActorStore()
      let consumer = consume(await store.states(), until: actions)
      let sample = await measure(operations: actions) {
        for _ in 0..<actions { await store.dispatch(.increment) }
        await consumer.value
      }
      await store.finish()
      return sample
    },
    .baseline("shared latest-value cell, 1 observer") {
      let store = SharedCellStore()
      let done = Arrivals(expected: 1)
      done.start(target: base)
      let consumer = store.observe { done.arrive(with: $0) }
      let sample = await measure(operations: base) {
        for _ in 0..<base { store.dispatch(.increment) }
        _ = await done.lastArrival()
      }
      store.finish()
      _ = await consumer.value
      return sample
    },
  ]
  var scenarios: [DispatchScenario] = []
  for producers in [1, 8] {
    for route in DispatchRoute.allCases {
      scenarios.append(DispatchScenario(producers: producers, route: route, observers: 0, policy: .latest))
      for policy in [BufferingPolicy.latest, .all] {
        for observers in [1, 100, 1_000] {
          scenarios.append(DispatchScenario(producers: producers, route: route, observers: observers, policy: policy))
        }
      }
    }
  }
  contenders += scenarios.map { scenario in
    .core(scenario.name) { await scenario.measure(base: base) }
  }
  let results = await runInterleaved(contenders, rounds: options.rounds)
  report.record("dispatch", results)
  let median = Dictionary(uniqueKeysWithValues: results.map { ($0.name, $0.median) })

  report.add(
    Report.Table(
      title: "Dispatch throughput, baselines (actions per second)",
      headers: ["baseline", "median", "min – max"],
      rows: results.filter(\.isBaseline).map {
        [$0.name, formatRate($0.median), "\(formatRate($0.min)) – \(formatRate($0.max))"]
      }))
  for producers in [1, 8] {
    var rows: [[String]] = []
    for route in DispatchRoute.allCases {
      for (observers, policy) in [(0, BufferingPolicy.latest)]
        + [1, 100, 1_000].flatMap({ [($0, .latest), ($0, .all)] })
      {
        let name = DispatchScenario(producers: producers, route: route, observers: observers, policy: policy).name
        guard let result = results.first(where: { $0.name == name }) else { continue }
        // Without observers, against the baseline of the same kind; with
        // them, against the same core without.
        let (baseline, label) =
          observers > 0
          ? (DispatchScenario(producers: producers, route: route, observers: 0, policy: .latest).name, "0 observers")
          : route == .send
            ? ("Mutex store, 0 callbacks", "Mutex store")
            : producers == 8
              ? ("plain actor, await dispatch, 8 producers, 0 observers", "plain actor, 8 producers")
              : ("plain actor, await dispatch, 0 observers", "plain actor")
        let ratio = median[baseline].map { "\(fixed(result.median / $0, 2))× \(label)" } ?? ""
        rows.append([
          route.rawValue, observers == 0 ? "0" : "\(observers) \(policy == .latest ? "latest" : "all")",
          formatRate(result.median), "\(formatRate(result.min)) – \(formatRate(result.max))", ratio,
        ])
      }
    }
    report.add(
      Report.Table(
        title: "Core dispatch throughput, \(producers) producer\(producers == 1 ? "" : "s") (actions per second)",
        headers: ["route", "observers", "median", "min – max", "ratio"], rows: rows,
        notes: producers == 1
          ? [
            "A figure is the time until every observer holds the final state. `.all` observers receive every "
              + "state; latest observers are published once per drained batch (`send`) and, while `dispatch` "
              + "calls come back to back, at most once per pause of the drain (20 µs, more with more observers, "
              + "at most 0.5 ms)."
          ] : []))
  }

  func ratio(_ name: String, _ baseline: String) -> Double {
    guard let value = median[name], let base = median[baseline], base > 0 else { return .nan }
    return value / base
  }
  let send0 = DispatchScenario(producers: 1, route: .send, observers: 0, policy: .latest).name
  let dispatch0 = DispatchScenario(producers: 1, route: .dispatch, observers: 0, policy: .latest).name
  let dispatch1 = DispatchScenario(producers: 1, route: .dispatch, observers: 1, policy: .latest).name
  let dispatch100 = DispatchScenario(producers: 1, route: .dispatch, observers: 100, policy: .latest).name
  let send1000 = DispatchScenario(producers: 1, route: .send, observers: 1_000, policy: .latest).name
  let dispatch8P = DispatchScenario(producers: 8, route: .dispatch, observers: 0, policy: .latest).name
  report.judge(
    "fire-and-forget `send`, 0 observers", requirement: "≥ 0.35 × Mutex store",
    value: ratio(send0, "Mutex store, 0 callbacks"), .atLeast, 0.35,
    why: "a send takes the mailbox lock and the drain takes it again per batch, on another core: when the "
      + "drain keeps pace the two contend for that cache line, which the single-threaded Mutex store never does.")
  report.judge(
    "`await dispatch`, 0 observers", requirement: "≥ 0.8 × plain actor",
    value: ratio(dispatch0, "plain actor, await dispatch, 0 observers"), .atLeast, 0.8,
    why: "beyond the actor hop the plain actor also pays, each dispatch reads the mailbox and shutdown flags and "
      + "whether there are observers, and the state's dynamic exclusivity check (kept on so a reducer that "
      + "re-enters the core traps) costs ~100 instructions with its thread-local lookups.")
  report.judge(
    "`await dispatch` with 1 latest-state observer", requirement: "≥ 0.5 × `await dispatch`, 0 observers",
    value: ratio(dispatch1, dispatch0), .atLeast, 0.5,
    why: "back-to-back dispatches leave their publication to the core's drain task; for its first few looks "
      + "the drain waits on the actor, so a dispatch then finds the actor busy and loses the fast hop a core "
      + "with no observers gets, and each publication wakes the observer, whose task shares the two cores "
      + "with the dispatcher.")
  report.judge(
    "`await dispatch` with 100 latest-state observers", requirement: "≥ 0.5 × `await dispatch`, 0 observers",
    value: ratio(dispatch100, dispatch0), .atLeast, 0.5,
    why: "publications are coalesced (at most one per pause of the drain, 420 µs with 100 observers), but "
      + "each one still costs a lock and often a wake-up per observer, and the 100 woken tasks share the two "
      + "cores with the dispatcher.")
  report.judge(
    "`send` with 1,000 latest-state observers", requirement: "≥ 0.5 × the same core with 0 observers",
    value: ratio(send1000, send0), .atLeast, 0.5,
    why: "every drained batch publishes to all 1,000 observers (a selector, a lock and often a wake-up each); "
      + "batches grow under load, but not enough to hide 1,000 wake-ups per batch.")
  report.judge(
    "`await dispatch` from 8 producers, 0 observers", requirement: "≥ 0.8 × plain actor, 8 producers",
    value: ratio(dispatch8P, "plain actor, await dispatch, 8 producers, 0 observers"), .atLeast, 0.8,
    why: eightProducersWhy)
}

enum DispatchRoute: String, CaseIterable, Sendable {
  case send = "send"
  case dispatch = "await dispatch"
}

struct DispatchScenario: Sendable {
  let producers: Int
  let route: DispatchRoute
  let observers: Int
  let policy: BufferingPolicy

  var name: String {
    let who = observers == 0 ? "0 observers" : "\(observers) \(policy == .latest ? "latest" : ".all") observers"
    return "Core \(route.rawValue), \(producers)P, \(who)"
  }

  /// Fewer actions where each wakes many tasks: only rates are compared.
  func actions(base: Int) -> Int {
    let perAction =
      switch (route, policy) {
      case (.send, .latest): Double(observers) * 0.01
      default: Double(observers)
      }
    let count = Int(Double(base) / (1 + perAction))
    return max(producers * 10, count / producers * producers)
  }

  func measure(base: Int) async -> Sample {
    let actions = actions(base: base)
    let core = makeBenchCore()
    var consumers: [Task<Void, Never>] = []
    for _ in 0..<observers {
      consumers.append(consume(await core.observe(\.count, buffering: policy), until: actions))
    }
    let route = route
    let producers = producers
    let sample = await AsyncCoreBenchmarks.measure(operations: actions) {
      await withDiscardingTaskGroup { group in
        for _ in 0..<producers {
          group.addTask {
            for _ in 0..<actions / producers {
              switch route {
              case .send: core.send(.increment)
              case .dispatch: await dispatch(.increment, to: core)
              }
            }
          }
        }
      }
      blackHole(await core.state)
      for consumer in consumers { await consumer.value }
    }
    await core.shutdown()
    return sample
  }
}

func makeBenchCore() -> Core<BenchState, BenchAction> {
  Core(initialState: BenchState(), reducer: Reduce(benchReduce))
}

/// `await core.dispatch(action)` for a core the benchmark never shuts down.
func dispatch(_ action: BenchAction, to core: Core<BenchState, BenchAction>) async {
  do {
    try await core.dispatch(action)
  } catch {
    fatalError("The benchmark's core refused an action: \(error)")
  }
}

/// Consumes counts until one reaches `target`.
func consume(_ counts: CoreStream<Int>, until target: Int) -> Task<Void, Never> {
  Task.detached {
    for await count in counts where count >= target { return }
    fatalError("The observer ended before the final state \(target)")
  }
}

/// Consumes states until the count reaches `target`.
func consume(_ states: AsyncStream<BenchState>, until target: Int) -> Task<Void, Never> {
  Task.detached {
    for await state in states where state.count >= target { return }
    fatalError("The observer ended before the final state \(target)")
  }
}

/// What a synchronous callback does with each state: keep the newest count.
final class LatestCount: Sendable {
  private let count = Atomic<Int>(0)
  func store(_ value: Int) { count.store(value, ordering: .relaxed) }
}

private let eightProducersWhy =
  "with eight producers on two cores, most dispatches find the actor busy and wait in its queue, as the plain "
  + "actor's do; on top of that each dispatch pays what it pays with one producer (the mailbox and shutdown "
  + "flags, the observer count, the exclusivity check), and the mailbox lock's cache line moves between cores."
