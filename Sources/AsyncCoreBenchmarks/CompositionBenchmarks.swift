import AsyncCore

/// Composed reducers: what `Reduce.scope` and `forEach` add to a
/// dispatch, against the same reducer written by hand, on a list of 5,000
/// rows.
///
/// Each operation is a `send`, with an `await dispatch` at the end of each
/// batch, on a core with no observers: the reducer's cost is most of it.
/// Each composed figure has one composition over the parent's logic.
/// - An action unrelated to the list: `forEach` must not pay for the list.
/// - An action for the middle row: both find the row by its id (O(n)).
/// - A fixed child's action: `scope` against writing into the child.
/// - An optional child's action: `ifLet` against writing into it.
func compositionCost(options: Options, report: Report) async {
  let actions = options.quick ? 2_000 : 20_000
  let results = await runInterleaved(
    CompositionScenario.allCases.map { scenario in
      scenario.isBaseline
        ? .baseline(scenario.rawValue) { await scenario.measure(actions: actions) }
        : .core(scenario.rawValue) { await scenario.measure(actions: actions) }
    },
    rounds: options.rounds)
  report.record("composition", results)
  let median = Dictionary(uniqueKeysWithValues: results.map { ($0.name, $0.median) })
  func ratio(_ composed: CompositionScenario, _ byHand: CompositionScenario) -> Double {
    guard let composed = median[composed.rawValue], let byHand = median[byHand.rawValue] else { return .nan }
    return byHand / composed  // time per action composed, over by hand
  }
  /// The time a composition adds to each action, in nanoseconds.
  func added(_ composed: CompositionScenario, _ byHand: CompositionScenario) -> Double {
    guard let composed = median[composed.rawValue], let byHand = median[byHand.rawValue] else { return .nan }
    return (1 / composed - 1 / byHand) * 1e9
  }
  report.add(
    Report.Table(
      title: "Composed reducers: \(grouped(CompositionState.rowCount)) rows, `send` × \(grouped(actions)) + "
        + "`await dispatch`",
      headers: ["reducer and action", "actions per second", "min – max", "time per action"],
      rows: results.map {
        [
          $0.name, formatRate($0.median), "\(formatRate($0.min)) – \(formatRate($0.max))",
          formatDuration(1 / $0.median),
        ]
      }))
  report.judge(
    "`forEach`, an action unrelated to the list (\(grouped(CompositionState.rowCount)) rows)",
    requirement: "≤ 250 ns added per action", value: added(.forEachOther, .byHandOther), .atMost, 250, digits: 0,
    unit: " ns",
    why: "after each action `forEach` checks which ids left the list; when the parent did not touch the list that "
      + "check must not walk it (walking 5,000 ids takes microseconds).")
  report.judge(
    "`forEach`, an action for one row", requirement: "≤ 1.5 × the reducer by hand",
    value: ratio(.forEachRow, .byHandRow), .atMost, 1.5,
    why: "both find the row by its id; `forEach` also lifts the row's (empty) effect and checks the ids after "
      + "the parent ran.")
  report.judge(
    "`Reduce.scope`, a fixed child's action", requirement: "≤ 250 ns added per action",
    value: added(.scopeChild, .byHandChild), .atMost, 250, digits: 0, unit: " ns",
    why: "a scoped child costs two closure calls a hand-written switch inlines (extracting the child's action, "
      + "the child's reducer), and `combine` one per reducer.")
  report.judge(
    "`ifLet`, an optional child's action", requirement: "≤ 250 ns added per action",
    value: added(.ifLetChild, .byHandOptional), .atMost, 250, digits: 0, unit: " ns",
    why: "`ifLet` costs the closure calls `scope` does, and checks the child is still there after the parent ran.")
}

struct CompositionState: Sendable {
  static let rowCount = 5_000

  struct Row: Sendable, Identifiable {
    let id: Int
    var count = 0
  }

  struct Child: Sendable {
    var count = 0
  }

  var rows = (0..<rowCount).map { Row(id: $0) }
  var child = Child()
  var detail: Child? = Child()
  var other = 0
}

enum CompositionAction: Sendable {
  case other
  case row(id: Int, action: RowAction)
  case child(RowAction)
  case detail(RowAction)

  enum RowAction: Sendable {
    case increment
  }

  static let rowCase = ActionCase(embed: CompositionAction.row) {
    if case .row(let id, let action) = $0 { (id, action) } else { nil }
  }

  static let childCase = ActionCase(embed: CompositionAction.child) {
    if case .child(let action) = $0 { action } else { nil }
  }

  static let detailCase = ActionCase(embed: CompositionAction.detail) {
    if case .detail(let action) = $0 { action } else { nil }
  }
}

enum CompositionScenario: String, CaseIterable, Sendable {
  case byHandOther = "by hand, an unrelated action (baseline)"
  case forEachOther = "`forEach`, an unrelated action"
  case byHandRow = "by hand, the middle row's action, `firstIndex(where:)` (baseline)"
  case forEachRow = "`forEach`, the middle row's action"
  case byHandChild = "by hand, a fixed child's action (baseline)"
  case scopeChild = "`Reduce.scope`, a fixed child's action"
  case byHandOptional = "by hand, an optional child's action (baseline)"
  case ifLetChild = "`ifLet`, an optional child's action"

  var isBaseline: Bool { [.byHandOther, .byHandRow, .byHandChild, .byHandOptional].contains(self) }

  var action: CompositionAction {
    switch self {
    case .byHandOther, .forEachOther: .other
    case .byHandRow, .forEachRow: .row(id: CompositionState.rowCount / 2, action: .increment)
    case .byHandChild, .scopeChild: .child(.increment)
    case .byHandOptional, .ifLetChild: .detail(.increment)
    }
  }

  static let byHand = Reduce<CompositionState, CompositionAction> { state, action in
    switch action {
    case .other:
      state.other &+= 1
    case .row(let id, .increment):
      if let index = state.rows.firstIndex(where: { $0.id == id }) { state.rows[index].count &+= 1 }
    case .child(.increment):
      state.child.count &+= 1
    case .detail(.increment):
      state.detail?.count &+= 1
    }
  }

  static let row = Reduce<CompositionState.Row, CompositionAction.RowAction> { row, _ in row.count &+= 1 }
  static let child = Reduce<CompositionState.Child, CompositionAction.RowAction> { child, _ in
    child.count &+= 1
  }

  static let other = Reduce<CompositionState, CompositionAction> { state, action in
    if case .other = action { state.other &+= 1 }
  }

  /// The reducer: by hand for a baseline; otherwise one composition over
  /// the parent logic, so each figure is that composition's own cost.
  var reducer: Reduce<CompositionState, CompositionAction> {
    switch self {
    case .byHandOther, .byHandRow, .byHandChild, .byHandOptional:
      Self.byHand
    case .forEachOther, .forEachRow:
      Self.other.forEach(\.rows, action: CompositionAction.rowCase, element: Self.row)
    case .scopeChild:
      .combine([.scope(state: \.child, action: CompositionAction.childCase, child: Self.child), Self.other])
    case .ifLetChild:
      Self.other.ifLet(\.detail, action: CompositionAction.detailCase, then: Self.child)
    }
  }

  func measure(actions: Int) async -> Sample {
    let core = Core(initialState: CompositionState(), reducer: reducer)
    let action = self.action
    let sample = await AsyncCoreBenchmarks.measure(operations: actions) {
      for _ in 0..<actions - 1 { core.send(action) }
      do { try await core.dispatch(action) } catch { fatalError("\(error)") }
    }
    await core.shutdown()
    return sample
  }
}
