import AsyncCore
import Synchronization

/// Synchronous subscribers: one `await dispatch` until it returns, with N
/// subscribers the core calls inside itself, beside an actor that calls N
/// callbacks inside itself (their memory is measured with the others, in
/// MemoryBenchmarks.swift).
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
  report.add(
    Report.Table(
      title: "Synchronous subscribers: one `await dispatch` with N subscribers (time per dispatch, median)",
      headers: ["N", "Core subscribers", "baseline: callbacks inside an actor", "ratio"], rows: rows))
  report.judge(
    "synchronous subscribers, fan-out to N = 1 … 10,000", requirement: "≤ 1.5 × callbacks inside an actor",
    value: worst, .atMost, 1.5, detail: worstDetail,
    why: "with one subscriber, a publication's fixed steps (checking for ended subscribers, the re-entry guard, "
      + "reading and comparing the value once for the group) weigh against a single callback; from ten on, "
      + "each further subscriber costs less than a further baseline callback (a member's call borrows its "
      + "callback from the group, with no retain and release), so the ratio falls below 1.")
}
