import AsyncCore

/// Memory: resident bytes per observer registration (not its consuming task)
/// and per idle core, from /proc/self/statm, while 100,000 of each are held.
func memoryFootprint(options: Options, report: Report) async {
  let count = options.quick ? 20_000 : 100_000
  let perObserver = await Task.detached { await bytesPerRegistration(count: count) }.value
  let perAsyncStream = await Task.detached { await bytesPerAsyncStream(count: count) }.value
  let perCore = await Task.detached { bytesPerIdleCore(count: count) }.value
  report.add(
    Report.Table(
      title: "Memory (resident bytes, \(grouped(count)) held)",
      headers: ["what", "bytes each"],
      rows: [
        ["Core observer registration (`observe`, not iterated)", "\(perObserver)"],
        ["baseline: one AsyncStream per observer (plain actor)", "\(perAsyncStream)"],
        ["idle Core (no observers, no effects)", "\(perCore)"],
      ]))
  report.figures += [
    Report.Figure(
      family: "memory", name: "observer registration", unit: "bytes", median: Double(perObserver),
      min: Double(perObserver), max: Double(perObserver)),
    Report.Figure(
      family: "memory", name: "idle core", unit: "bytes", median: Double(perCore), min: Double(perCore),
      max: Double(perCore)),
  ]
  report.judge(
    "memory per observer (registration only)", requirement: "≤ 256 B", value: Double(perObserver), .atMost, 256,
    digits: 0, unit: " B",
    why: "a registration is two heap objects (the core's subscription with its selector and comparison "
      + "closures, and the cell with its lock, buffer and last value) plus the stream's registration object.")
  report.judge(
    "memory per idle core", requirement: "≤ 1 KB", value: Double(perCore), .atMost, 1_024, digits: 0, unit: " B",
    why: "besides the actor itself, a core allocates its effect registry, effect queue, activity counter and "
      + "observer counter up front; allocating them on first use would bring an idle core down.")
}

func bytesPerRegistration(count: Int) async -> Int {
  let core = makeBenchCore()
  var streams: [CoreStream<Int>] = []
  streams.reserveCapacity(count)
  let before = residentBytes()
  for _ in 0..<count { streams.append(await core.observe(\.count)) }
  let after = residentBytes()
  blackHole(streams)
  streams = []
  await core.shutdown()
  return (after - before) / count
}

func bytesPerAsyncStream(count: Int) async -> Int {
  let store = PlainActorStore()
  var streams: [AsyncStream<BenchState>] = []
  streams.reserveCapacity(count)
  let before = residentBytes()
  for _ in 0..<count { streams.append(await store.states()) }
  let after = residentBytes()
  blackHole(streams)
  await store.finish()
  return (after - before) / count
}

func bytesPerIdleCore(count: Int) -> Int {
  var cores: [Core<BenchState, BenchAction>] = []
  cores.reserveCapacity(count)
  let before = residentBytes()
  for _ in 0..<count { cores.append(makeBenchCore()) }
  let after = residentBytes()
  blackHole(cores)
  return (after - before) / count
}
