import AsyncCore
import Synchronization

/// Synchronous subscribers: one `await dispatch` until it returns, with N
/// subscribers the core calls inside itself, beside an actor that calls N
/// callbacks inside itself; and the memory each subscriber holds.
func subscriberFanOut(options: Options, report: Report) async {
  let counts = options.quick ? [1, 100, 1_000] : [1, 10, 100, 1_000, 10_000]
  var rows: [[String]] = []
  var worst = 0.0
  var worstDetail = ""
  for subscribers in counts {
    // Enough dispatches per round that each figure is well above the clock's
    // resolution, fewer where each calls many callbacks.
    let dispatches = max(20, (options.quick ? 20_000 : 200_000) / (subscribers + 10))
    let contenders: [Contender] = [
      .baseline("callbacks inside an actor, N=\(subscribers)") {
        let store = CallbackActorStore()
        let sink = LatestCount()
        for _ in 0..<subscribers { await store.subscribe { sink.store($0) } }
        return await measure(operations: dispatches) {
          for _ in 0..<dispatches { await store.dispatch(.increment) }
        }
      },
      .core("Core subscribers, N=\(subscribers)") {
        let core = makeBenchCore()
        let sink = LatestCount()
        var tokens: [Subscriber] = []
        for _ in 0..<subscribers { tokens.append(await core.subscribe(to: \.count) { sink.store($0) }) }
        let sample = await measure(operations: dispatches) {
          for _ in 0..<dispatches { await dispatch(.increment, to: core) }
        }
        blackHole(tokens)
        await core.shutdown()
        return sample
      },
    ]
    let results = await runInterleaved(contenders, rounds: options.rounds)
    report.record("subscribers", results)
    guard let base = results.first(where: \.isBaseline), let core = results.first(where: { !$0.isBaseline })
    else { continue }
    // Time per dispatch, callbacks included: the inverse of the rate.
    let ratio = base.median / core.median
    if ratio > worst {
      worst = ratio
      worstDetail = "worst at N = \(grouped(subscribers)): \(formatDuration(1 / core.median)) per dispatch"
    }
    rows.append([
      grouped(subscribers), formatDuration(1 / core.median), formatDuration(1 / base.median), "\(fixed(ratio, 2))×",
    ])
  }
  let bytes = await Task.detached { await bytesPerSubscriber(count: options.quick ? 20_000 : 100_000) }.value
  report.add(
    Report.Table(
      title: "Synchronous subscribers: one `await dispatch` with N subscribers (time per dispatch, median)",
      headers: ["N", "Core subscribers", "baseline: callbacks inside an actor", "ratio"], rows: rows,
      notes: ["Memory per subscriber (its token, its registration and the core's entry): \(bytes) B."]))
  report.judge(
    "synchronous subscribers, fan-out to N = 1 … 10,000", requirement: "≤ 1.5 × callbacks inside an actor",
    value: worst, .atMost, 1.5, detail: worstDetail,
    why: "each subscriber is reached through its subscription's closure and checks that it is still active, "
      + "selects its value and compares it with the last one before the call; the baseline calls a closure.")
  report.judge(
    "memory per synchronous subscriber", requirement: "≤ 200 B", value: Double(bytes), .atMost, 200, digits: 0,
    unit: " B",
    why: "a subscriber is its token, its registration (selector, comparison, callback, last value) and an "
      + "entry in the core's list.")
}

func bytesPerSubscriber(count: Int) async -> Int {
  let core = makeBenchCore()
  var tokens: [Subscriber] = []
  tokens.reserveCapacity(count)
  let sink = LatestCount()
  let before = residentBytes()
  for _ in 0..<count { tokens.append(await core.subscribe(to: \.count) { sink.store($0) }) }
  let after = residentBytes()
  blackHole(tokens)
  tokens = []
  await core.shutdown()
  return (after - before) / count
}
