import AsyncCore

/// Scoped handles: what a handle costs in memory, and what
/// observing through one costs against observing the core directly.
///
/// Memory: resident bytes per handle while 100,000 are held (1,000 are
/// under the page granularity of /proc/self/statm), reported per handle
/// and per 1,000: a handle on a fixed child (`core.scope(state:action:)`),
/// and one on a list's element (`await core.scope(state:id:action:)`, which
/// the core also registers, to end it when the element leaves).
///
/// Observing: 1,000 observers of one child's value, with one publication
/// per operation (`await dispatch` + `await state`, as in the selector
/// benchmark), the value changing each time: observers of the core's joined
/// key path against observers through a handle's key path; and observers
/// of a list element through element handles against observers of the
/// same element with a closure on the core.
func scopeCost(options: Options, report: Report) async {
  let count = options.quick ? 20_000 : 100_000
  let (perFixed, perElement) = await Task.detached {
    let held = Held()
    let perFixed = await bytesPerFixedHandle(count: count, held: held)
    let perElement = await bytesPerElementHandle(count: count, held: held)
    await held.release()
    return (perFixed, perElement)
  }.value
  report.add(
    Report.Table(
      title: "Scoped handles: memory (resident bytes, \(grouped(count)) held)",
      headers: ["handle", "bytes each", "per 1,000 handles"],
      rows: [
        ["on a fixed child, `core.scope(state: \\.child, action:)`", "\(perFixed)", kilobytes(perFixed * 1_000)],
        [
          "on a list's element, `await core.scope(state: \\.rows, id:, action:)`", "\(perElement)",
          kilobytes(perElement * 1_000),
        ],
      ]))
  report.figures += [
    Report.Figure(
      family: "scopes", name: "memory per fixed handle", unit: "bytes", median: Double(perFixed),
      min: Double(perFixed), max: Double(perFixed)),
    Report.Figure(
      family: "scopes", name: "memory per element handle", unit: "bytes", median: Double(perElement),
      min: Double(perElement), max: Double(perElement)),
  ]
  let actions = options.quick ? 300 : 2_000
  let observers = 1_000
  let results = await runInterleaved(
    ScopeScenario.allCases.map { scenario in
      scenario.isBaseline
        ? .baseline(scenario.rawValue) { await scenario.measure(observers: observers, actions: actions) }
        : .core(scenario.rawValue) { await scenario.measure(observers: observers, actions: actions) }
    },
    rounds: options.rounds)
  report.record("scopes", results)
  let median = Dictionary(uniqueKeysWithValues: results.map { ($0.name, $0.median) })
  func ratio(_ scoped: ScopeScenario, _ direct: ScopeScenario) -> Double {
    guard let scoped = median[scoped.rawValue], let direct = median[direct.rawValue] else { return .nan }
    return direct / scoped  // time per operation through the handle, over the core's
  }
  report.add(
    Report.Table(
      title: "Scoped handles: 1,000 observers, one publication per `await dispatch` + `await state`",
      headers: ["observers", "operations per second", "min – max", "time per operation"],
      rows: results.map {
        [
          $0.name, formatRate($0.median), "\(formatRate($0.min)) – \(formatRate($0.max))",
          formatDuration(1 / $0.median),
        ]
      },
      notes: [
        "Observers of one value through handles on one child share a group (one read per publication), "
          + "as observers of one key path on the core do; the 1,000 closure observers on the core each "
          + "read their own. An element handle's group finds its element by id, first where it was last."
      ]))
  report.judge(
    "observing through a scoped handle (fixed child)", requirement: "≤ 1.1 × observing the core",
    value: ratio(.fixedHandle, .core), .atMost, 1.1,
    why: "a handle's key path observer joins the core's group for the joined key path, so the two should cost "
      + "the same; a miss here is noise or a regression in how handles register.")
  report.judge(
    "observing through an element handle", requirement: "≤ 1.25 × a closure on the core",
    value: ratio(.elementHandle, .elementClosure), .atMost, 1.25,
    why: "an element handle's observer finds its element as the closure does, then unwraps an optional and "
      + "passes through the member that ends it with the element.")
}

struct ScopeState: Sendable {
  struct Child: Sendable {
    var count = 0
  }

  struct Row: Sendable, Identifiable {
    let id: Int
    var count = 0
  }

  var child = Child()
  var rows = (0..<10).map { Row(id: $0) }
}

enum ScopeAction: Sendable {
  case child
  case row(id: Int)

  /// The child's case: it has no actions.
  static let childCase = ActionCase(embed: { (_: Never) -> ScopeAction in }, extract: { _ in nil })
  /// A row's case: its actions carry nothing but the row's id.
  static let rowCase = ActionCase<ScopeAction, (Int, Void)>(
    embed: { id, _ in .row(id: id) }, extract: { if case .row(let id) = $0 { (id, ()) } else { nil } })
}

enum ScopeScenario: String, CaseIterable, Sendable {
  case core = "core.observe(\\.child.count) (baseline)"
  case fixedHandle = "handle.observe(\\.count), handle = core.scope(state: \\.child, …)"
  case elementClosure = "core.observe { its row's count } (baseline)"
  case elementHandle = "row.observe(\\.count), row = await core.scope(state: \\.rows, id:, …)"

  var isBaseline: Bool { self == .core || self == .elementClosure }

  static func makeCore() -> Core<ScopeState, ScopeAction> {
    Core(
      initialState: ScopeState(),
      reducer: Reduce { state, action in
        switch action {
        case .child: state.child.count &+= 1
        case .row(let id): state.rows[id].count &+= 1
        }
      })
  }

  func measure(observers: Int, actions: Int) async -> Sample {
    let core = Self.makeCore()
    let child = core.scope(state: \.child, action: ScopeAction.childCase)
    var consumers: [Task<Void, Never>] = []
    for _ in 0..<observers {
      let stream: CoreStream<Int>
      switch self {
      case .core:
        stream = await core.observe(\.child.count)
      case .fixedHandle:
        stream = await child.observe(\.count)
      case .elementClosure:
        stream = await core.observe { $0.rows[3].count }
      case .elementHandle:
        guard let row = await core.scope(state: \.rows, id: 3, action: ScopeAction.rowCase) else {
          fatalError("the benchmark's row 3 is missing")
        }
        stream = await row.observe(\.count)
      }
      consumers.append(Task.detached { for await value in stream { blackHole(value) } })
    }
    let action: ScopeAction = self == .core || self == .fixedHandle ? .child : .row(id: 3)
    let sample = await AsyncCoreBenchmarks.measure(operations: actions) {
      for _ in 0..<actions {
        do { try await core.dispatch(action) } catch { fatalError("\(error)") }
        blackHole(await core.state.child.count)
      }
    }
    await core.shutdown()
    for consumer in consumers { await consumer.value }
    return sample
  }
}

func bytesPerFixedHandle(count: Int, held: Held) async -> Int {
  let core = ScopeScenario.makeCore()
  var handles: [ScopedCore<ScopeState.Child, Never>] = []
  handles.reserveCapacity(count)
  let before = residentBytes()
  for _ in 0..<count { handles.append(core.scope(state: \.child, action: ScopeAction.childCase)) }
  let after = residentBytes()
  await held.keep(handles)
  return (after - before) / count
}

func bytesPerElementHandle(count: Int, held: Held) async -> Int {
  let core = ScopeScenario.makeCore()
  var handles: [ScopedCore<ScopeState.Row, Void>] = []
  handles.reserveCapacity(count)
  let before = residentBytes()
  for index in 0..<count {
    guard let handle = await core.scope(state: \.rows, id: index % 10, action: ScopeAction.rowCase) else {
      fatalError("the benchmark's row \(index % 10) is missing")
    }
    handles.append(handle)
  }
  let after = residentBytes()
  await held.keep(handles)
  return (after - before) / count
}

/// `bytes` in kilobytes, for the per-1,000 column.
func kilobytes(_ bytes: Int) -> String {
  "\(fixed(Double(bytes) / 1_024, 1)) KB"
}
