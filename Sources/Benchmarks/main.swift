// The benchmark's entry point. Measurements run on detached tasks (see
// `runInterleaved`); this top-level code only sequences them and prints.

let options = Options(arguments: CommandLine.arguments)
let clock = ContinuousClock()
let started = clock.now

print("# AsyncCore benchmarks\(options.quick ? " (--quick: a smoke run; rough figures)" : "")")
print("\n\(options.rounds) interleaved rounds per figure; median (min – max).")

if options.includes("dispatch throughput") {
  let results = await dispatchThroughput(options: options)
  let byName = Dictionary(uniqueKeysWithValues: results.map { ($0.name, $0.median) })
  func ratio(_ name: String, over baseline: String) -> String {
    guard let value = byName[name], let base = byName[baseline], base > 0 else { return "" }
    return "\(fixed(value / base, 2))× \(baseline)"
  }
  let comparisons = [
    "Core send, 0 observers": ratio("Core send, 0 observers", over: "Mutex store, 0 callbacks"),
    "Core await dispatch, 0 observers": ratio(
      "Core await dispatch, 0 observers", over: "plain actor, await dispatch, 0 observers"),
    "Core send, 1 latest observer": ratio(
      "Core send, 1 latest observer", over: "Mutex store, 1 callback (every state)"),
    "Core await dispatch, 1 latest observer": ratio(
      "Core await dispatch, 1 latest observer", over: "Mutex store, 1 callback (every state)"),
  ]
  printThroughput(
    title: "Dispatch throughput, 1 producer (actions per second)", results, ratio: { comparisons[$0.name] ?? "" })
}

if options.includes("fan-out latency") {
  let results = await fanOutLatency(options: options)
  printTable(
    title: "Fan-out latency: one dispatch until the last of N observers holds it (p50 / p99)",
    headers: ["N", "Core (CoreStream)", "baseline: 1 AsyncStream per observer", "p50 ratio"],
    rows: results.map { result in
      let core = (percentile(result.core, 0.5), percentile(result.core, 0.99))
      let base = (percentile(result.baseline, 0.5), percentile(result.baseline, 0.99))
      return [
        "\(result.observers)",
        "\(formatDuration(core.0)) / \(formatDuration(core.1))",
        "\(formatDuration(base.0)) / \(formatDuration(base.1))",
        "\(fixed(core.0 / base.0, 2))×",
      ]
    })
}

if options.includes("effect throughput") {
  let results = await effectThroughput(options: options)
  let baseline = results.first { $0.isBaseline }?.median ?? 0
  printThroughput(title: "Effect throughput (effects started and finished per second)", results) { result in
    result.isBaseline || baseline == 0 ? "" : "\(fixed(result.median / baseline, 2))× bare task-group children"
  }
}

print("\nTotal time: \(formatDuration((clock.now - started).seconds))")
