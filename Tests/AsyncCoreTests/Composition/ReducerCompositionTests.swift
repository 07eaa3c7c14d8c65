import AsyncCoreTesting
import Testing

@testable import AsyncCore

/// A parent reducer built from child reducers.
@Suite("Reducer composition", .hangDetector)
struct ReducerCompositionTests {
  @Test("a scoped child reduces its own part, only for its own actions")
  func scopeRoutesChildActions() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.left(.increment))
    try await core.dispatch(.right(.setTitle("R")))
    try await core.dispatch(.note("n"))
    let state = await core.state
    #expect(state.left == Panel(count: 1))
    #expect(state.right == Panel(title: "R"))
    #expect(state.notes == ["n"])
  }

  @Test("combine runs reducers in the order given, each on the state the one before left")
  func combineOrder() async throws {
    func appending(_ name: String) -> Reduce<[String], Int> {
      Reduce { log, action in
        log.append("\(name)\(action) after \(log.count)")
        return action == 1 ? .send(2) : .none
      }
    }
    let core = Core(initialState: [], reducer: Reduce.combine([appending("a"), appending("b"), appending("c")]))
    try await core.dispatch(1)
    // Each returned `.send(2)` for action 1: merged, so reduced three times.
    #expect(
      await core.state == [
        "a1 after 0", "b1 after 1", "c1 after 2",
        "a2 after 3", "b2 after 4", "c2 after 5",
        "a2 after 6", "b2 after 7", "c2 after 8",
        "a2 after 9", "b2 after 10", "c2 after 11",
      ])
    #expect(await core.state.count == 12)
  }

  @Test("combine of none or one reducer is that reducer")
  func combineEdges() async throws {
    let single = Reduce<Int, Int> { state, action in state += action }
    var state = 0
    #expect(Reduce.combine([single]).reduce(into: &state, action: 2).isNoneForTesting)
    #expect(Reduce<Int, Int>.combine([]).reduce(into: &state, action: 5).isNoneForTesting)
    #expect(state == 2)
  }

  @Test("a reducer that starts no effects runs on the core's pure fast path: alone, combined with others, or scoped")
  func pureReducersKeepThePureFastPath() async throws {
    let count = Reduce<Panel, PanelAction> { panel, action in
      if case .increment = action { panel.count += 1 }
    }
    let note = Reduce<Board, BoardAction> { board, action in
      if case .note(let text) = action { board.notes.append("\(text) after \(board.left.count)") }
    }
    let left = Reduce<Board, BoardAction>.scope(state: \.left, action: BoardAction.leftCase, child: count)
    for reducer in [note, left, .combine([left, note]), .combine([note, .combine([left, Reduce { _, _ in }])])] {
      #expect(await Core(initialState: Board(), reducer: reducer).reducesPurely)
    }
    // Any part that may start effects makes the whole effectful.
    let effectful: [Reduce<Board, BoardAction>] = [
      Reduce { _, _ in .none },
      .combine([note, BoardFeature.logic]),
      .scope(state: \.left, action: BoardAction.leftCase, child: PanelFeature.reducer),
      note.ifLet(\.detail, action: BoardAction.detailCase, then: count),
    ]
    for reducer in effectful {
      #expect(await !Core(initialState: Board(), reducer: reducer).reducesPurely)
    }
    // The fast loop reduces a batch in order, each part on what the one
    // before left.
    let core = Core(initialState: Board(), reducer: .combine([left, note]))
    core.send(contentsOf: [.left(.increment), .note("a"), .left(.increment), .note("b"), .right(.increment)])
    let state = await core.state
    #expect(state.left.count == 2)
    #expect(state.notes == ["a after 1", "b after 2"])
  }

  @Test("a child's effects send the child's actions back as the parent's")
  func childEffectsLifted() async throws {
    let clock = ManualClock()
    let core = BoardFeature.makeCore(clock: clock)
    let log = collect(await core.actions())
    try await core.dispatch(.left(.load("a")))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.left.loaded == ["a"])
    await core.shutdown()
    #expect(await log.value.map(\.action) == [.left(.load("a")), .left(.loaded("a"))])
  }

  @Test("siblings' cancel ids are their own: cancelling one child's never reaches the other's")
  func siblingCancelIDs() async throws {
    let clock = ManualClock()
    let core = BoardFeature.makeCore(clock: clock)
    try await core.dispatch(.left(.load("a")))
    try await core.dispatch(.right(.load("b")))
    try await core.dispatch(.parentLoad)
    try await clock.waitForSleepers(atLeast: 3)
    try await core.dispatch(.left(.cancelLoad))
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    let state = await core.state
    #expect(state.left.loaded == [])
    #expect(state.right.loaded == ["b"])
    #expect(state.notes == ["parent loaded"])
  }

  @Test("the parent's cancel id never reaches a child's effect with the same id")
  func parentCancelIDIsItsOwn() async throws {
    let clock = ManualClock()
    let core = BoardFeature.makeCore(clock: clock)
    try await core.dispatch(.left(.load("a")))
    try await core.dispatch(.parentLoad)
    try await clock.waitForSleepers(atLeast: 2)
    try await core.dispatch(.parentCancelLoad)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    let state = await core.state
    #expect(state.left.loaded == ["a"])
    #expect(state.notes == [])
  }

  @Test("each element's cancel ids are its own")
  func elementCancelIDs() async throws {
    let clock = ManualClock()
    let core = BoardFeature.makeCore(clock: clock)
    try await core.dispatch(contentsOf: [.addRow(1), .addRow(2), .row(id: 1, action: .load("one"))])
    try await core.dispatch(.row(id: 2, action: .load("two")))
    try await clock.waitForSleepers(atLeast: 2)
    try await core.dispatch(.row(id: 1, action: .cancelLoad))
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.rows.map(\.loaded) == [[], ["two"]])
  }

  @Test("cancel ids of different types stay apart inside a child")
  func mixedIDTypes() async throws {
    let clock = ManualClock()
    let child = Reduce<[String], String> { log, action in
      switch action {
      case "start":
        return .merge([
          .run { send in
            try await send.clock.sleep(for: .seconds(1))
            await send("int")
          }
          .cancellable(id: 1),
          .run { send in
            try await send.clock.sleep(for: .seconds(1))
            await send("uint8")
          }
          .cancellable(id: 1 as UInt8),
        ])
      case "cancel":
        return .cancel(id: 1 as UInt8)
      default:
        log.append(action)
        return .none
      }
    }
    let stringCase = ActionCase<String?, String>(embed: { $0 }, extract: { $0 })
    let core = Core(
      initialState: [], clock: clock,
      reducer: Reduce<[String], String?>.scope(state: \.self, action: stringCase, child: child))
    try await core.dispatch("start")
    try await clock.waitForSleepers(atLeast: 2)
    try await core.dispatch("cancel")
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state == ["int"])
  }

  @Test("a child's effects see the core's dependencies, overridden or narrowed where the parent says")
  func childDependencies() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(contentsOf: [.showDetail, .addRow(1)])
    try await core.dispatch(contentsOf: [
      .left(.readPrefix), .right(.readPrefix), .detail(.readPrefix), .row(id: 1, action: .readPrefix),
    ])
    try await core.waitUntilIdle()
    let state = await core.state
    #expect(state.left.loaded == ["core"])  // the core's
    #expect(state.right.loaded == ["right"])  // overridden
    #expect(state.detail?.loaded == ["default"])  // narrowed: the key's default
    #expect(state.rows.first?.loaded == ["core"])
  }
}

extension Core {
  /// Whether the core reduces on its pure fast path: its reducer starts no
  /// effects, so batches are reduced in one loop and no `Effect` is built.
  var reducesPurely: Bool {
    if case .pure = reducer { return true }
    return false
  }
}

extension Effect {
  /// Whether the effect is `.none`, seen from a test.
  var isNoneForTesting: Bool {
    if case .none = operation { return true }
    return false
  }
}
