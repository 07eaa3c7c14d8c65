import AsyncCore

/// Effects started and finished per second: a core whose reducer returns a
/// `.run` effect per action, against bare children of a discarding task
/// group (the structure the core's effects run in) in the same rounds.
func effectThroughput(options: Options, report: Report) async {
  let effects = options.quick ? 20_000 : 100_000
  let contenders: [Contender] = [
    .baseline("bare task-group children") {
      await measure(operations: effects) {
        await withDiscardingTaskGroup { group in
          for index in 0..<effects {
            group.addTask { blackHole(index) }
          }
        }
      }
    },
    .core("Core effects (.run, no follow-up)") {
      let core = makeEffectCore()
      let actions = Array(repeating: EffectAction.start(sendsBack: false), count: effects)
      return await measure(operations: effects) {
        await finish(core, actions)
      }
    },
    .core("Core effects (.run sending one follow-up)") {
      let core = makeEffectCore()
      let actions = Array(repeating: EffectAction.start(sendsBack: true), count: effects)
      return await measure(operations: effects) {
        await finish(core, actions)
      }
    },
  ]
  let results = await runInterleaved(contenders, rounds: options.rounds)
  report.record("effects", results)
  let baseline = results.first { $0.isBaseline }?.median ?? 0
  report.add(
    Report.Table(
      title: "Effect throughput (effects started and finished per second)",
      headers: ["design", "median", "min – max", "ratio"],
      rows: results.map { result in
        [
          result.isBaseline ? "baseline: \(result.name)" : "**\(result.name)**", formatRate(result.median),
          "\(formatRate(result.min)) – \(formatRate(result.max))",
          result.isBaseline ? "" : "\(fixed(result.median / baseline, 2))× bare children",
        ]
      }))
  report.judge(
    "effects started and finished per second", requirement: "≥ 0.8 × bare task-group children",
    value: (results.first { !$0.isBaseline }?.median ?? 0) / baseline, .atLeast, 0.8,
    why: "besides the child task, each effect is one job object, registered for cancellation (a slot in the "
      + "core's registry), counted in its dispatch's lineage and handed to the core's runner through a queue "
      + "(six lock acquisitions in all), and runs inside a task-local scope that tells the core's own effects "
      + "apart.")
}

enum EffectAction: Sendable {
  case start(sendsBack: Bool)
  case finished
}

func makeEffectCore() -> Core<Int, EffectAction> {
  Core(initialState: 0) { finished, action in
    switch action {
    case .start(let sendsBack):
      return .run { send in
        if sendsBack { await send(.finished) }
      }
    case .finished:
      finished += 1
      return .none
    }
  }
}

/// Dispatches `actions` in one hop and waits for every effect they start.
func finish(_ core: Core<Int, EffectAction>, _ actions: [EffectAction]) async {
  do {
    try await core.dispatch(contentsOf: actions).finish()
  } catch {
    fatalError("The benchmark's core refused an action: \(error)")
  }
}
