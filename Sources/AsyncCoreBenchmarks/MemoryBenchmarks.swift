import AsyncCore

/// Memory: resident bytes per observer registration (not its consuming
/// task), per synchronous subscriber and per idle core, from
/// /proc/self/statm, while 100,000 of each are held. Every set is held until
/// all are measured, so each grows into fresh pages: one measured after
/// another set was freed would reuse its pages and read low.
func memoryFootprint(options: Options, report: Report) async {
  let count = options.quick ? 20_000 : 100_000
  let (perObserver, perAsyncStream, perCore, perSubscriber) = await Task.detached {
    let held = Held()
    let perObserver = await bytesPerRegistration(count: count, held: held)
    let perAsyncStream = await bytesPerAsyncStream(count: count, held: held)
    let perCore = await bytesPerIdleCore(count: count, held: held)
    let perSubscriber = await bytesPerSubscriber(count: count, held: held)
    await held.release()
    return (perObserver, perAsyncStream, perCore, perSubscriber)
  }.value
  report.add(
    Report.Table(
      title: "Memory (resident bytes, \(grouped(count)) held)",
      headers: ["what", "bytes each"],
      rows: [
        ["Core observer registration (`observe`, not iterated)", "\(perObserver)"],
        ["baseline: one AsyncStream per observer (plain actor)", "\(perAsyncStream)"],
        ["Core synchronous subscriber (its token, its registration and the core's entry)", "\(perSubscriber)"],
        ["idle Core (no observers, no effects)", "\(perCore)"],
      ]))
  report.figures += [
    Report.Figure(
      family: "memory", name: "observer registration", unit: "bytes", median: Double(perObserver),
      min: Double(perObserver), max: Double(perObserver)),
    Report.Figure(
      family: "memory", name: "synchronous subscriber", unit: "bytes", median: Double(perSubscriber),
      min: Double(perSubscriber), max: Double(perSubscriber)),
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
    "memory per synchronous subscriber", requirement: "≤ 200 B", value: Double(perSubscriber), .atMost, 200,
    digits: 0, unit: " B",
    why: "a subscriber is its token, its registration (whether it is subscribed) and its entry in its group "
      + "(its callback), plus the callback's captures.")
  report.judge(
    "memory per idle core", requirement: "≤ 1 KB", value: Double(perCore), .atMost, 1_024, digits: 0, unit: " B",
    why: "besides the actor itself, a core allocates its effect registry, effect queue, activity counter and "
      + "observer counter up front; allocating them on first use would bring an idle core down.")
}

/// What a memory measurement holds until every set is measured, and how
/// to let it go.
actor Held {
  private var values: [any Sendable] = []
  private var releases: [@Sendable () async -> Void] = []

  func keep(_ value: any Sendable, release: @escaping @Sendable () async -> Void = {}) {
    values.append(value)
    releases.append(release)
  }

  func release() async {
    values = []
    for release in releases { await release() }
    releases = []
  }
}

func bytesPerRegistration(count: Int, held: Held) async -> Int {
  let core = makeBenchCore()
  var streams: [CoreStream<Int>] = []
  streams.reserveCapacity(count)
  let before = residentBytes()
  for _ in 0..<count { streams.append(await core.observe(\.count)) }
  let after = residentBytes()
  await held.keep(streams) { await core.shutdown() }
  return (after - before) / count
}

func bytesPerAsyncStream(count: Int, held: Held) async -> Int {
  let store = PlainActorStore()
  var streams: [AsyncStream<BenchState>] = []
  streams.reserveCapacity(count)
  let before = residentBytes()
  for _ in 0..<count { streams.append(await store.states()) }
  let after = residentBytes()
  await held.keep(streams) { await store.finish() }
  return (after - before) / count
}

func bytesPerIdleCore(count: Int, held: Held) async -> Int {
  var cores: [Core<BenchState, BenchAction>] = []
  cores.reserveCapacity(count)
  let before = residentBytes()
  for _ in 0..<count { cores.append(makeBenchCore()) }
  let after = residentBytes()
  await held.keep(cores)
  return (after - before) / count
}

func bytesPerSubscriber(count: Int, held: Held) async -> Int {
  let core = makeBenchCore()
  var tokens: [Subscriber] = []
  tokens.reserveCapacity(count)
  let sink = LatestCount()
  let before = residentBytes()
  for _ in 0..<count { tokens.append(await core.subscribe(to: \.count) { sink.store($0) }) }
  let after = residentBytes()
  await held.keep(tokens) { await core.shutdown() }
  return (after - before) / count
}
