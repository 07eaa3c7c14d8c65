import AsyncCore
import AsyncCoreTesting
import Testing

/// Children that leave the state (an optional child, a list's
/// elements) end with it: effects, observers, handles.
@Suite("Dynamic children", .hangDetector)
struct DynamicChildTests {
  @Test("an action for a missing child is reported, not reduced, and the core goes on")
  func missingChildReported() async throws {
    let diagnostics = Events<EffectFailure>()
    let core = BoardFeature.makeCore(diagnostics: diagnostics)
    try await core.dispatch(.detail(.increment))
    try await core.dispatch(.row(id: 9, action: .setTitle("x")))
    try await core.dispatch(.left(.increment))
    #expect(await core.state == Board(left: Panel(count: 1)))
    let failures = diagnostics.all
    try #require(failures.count == 2)
    let detail = try #require(MissingChild(failures[0]))
    #expect(detail.child == "\\Board.detail")
    #expect(detail.action as? BoardAction == .detail(.increment))
    #expect("\(failures[0].fileID)" == "AsyncCoreTests/Panel.swift")
    #expect(
      failures[0].description
        == "AsyncCore: an action for \\Board.detail, which is not in the state, was not reduced: "
        + "detail(AsyncCoreTests.PanelAction.increment) (the child placed at AsyncCoreTests/Panel.swift:\(failures[0].line))"
    )
    let row = try #require(MissingChild(failures[1]))
    #expect(row.child == "\\Board.rows[id: 9]")
    #expect(failures[1].line != failures[0].line)  // the forEach, not the ifLet
  }

  @Test("an optional child's effects are cancelled when it becomes nil; others run on")
  func optionalChildEffectsCancelled() async throws {
    let clock = ManualClock()
    let core = BoardFeature.makeCore(clock: clock)
    try await core.dispatch(.showDetail)
    try await core.dispatch(.detail(.load("d")))
    try await core.dispatch(.left(.load("l")))
    try await clock.waitForSleepers(atLeast: 2)
    try await core.dispatch(.hideDetail)
    try await core.dispatch(.showDetail)  // a new child: the old one's effect stays cancelled
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    let state = await core.state
    #expect(state.detail == Panel(id: 100))
    #expect(state.left.loaded == ["l"])
  }

  @Test("an optional child replaced by one with another id ends: its effects and handles")
  func replacedChildEnds() async throws {
    let clock = ManualClock()
    let core = BoardFeature.makeCore(clock: clock)
    try await core.dispatch(.showDetail)
    let old = try #require(await core.scope(state: \.detail, action: BoardAction.detailCase))
    try await core.dispatch(.detail(.load("old")))
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.replaceDetail(7))
    #expect(old.isRemoved)
    try await core.waitUntilIdle()  // the old load was cancelled, and has ended
    try await core.dispatch(.detail(.load("new")))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.detail == Panel(id: 7, loaded: ["new"]))
  }

  @Test("a removed element's effects are cancelled; the other elements' run on")
  func elementEffectsCancelled() async throws {
    let clock = ManualClock()
    let core = BoardFeature.makeCore(clock: clock)
    try await core.dispatch(contentsOf: [.addRow(1), .addRow(2), .addRow(3)])
    for id in 1...3 { try await core.dispatch(.row(id: id, action: .load("\(id)"))) }
    try await clock.waitForSleepers(atLeast: 3)
    try await core.dispatch(.removeRow(2))
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.rows.map(\.loaded) == [["1"], ["3"]])
  }

  @Test("a loop observing an optional child ends after its last value", arguments: [BufferingPolicy.all, .latest])
  func optionalObserverEnds(policy: BufferingPolicy) async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.showDetail)
    let detail = try #require(await core.scope(state: \.detail, action: BoardAction.detailCase))
    let counts = collect(await detail.observe(\.count, buffering: policy))
    try await core.dispatch(.detail(.increment))
    try await core.dispatch(.detail(.increment))
    try await core.dispatch(.hideDetail)
    let received = await counts.value
    #expect(received.last == 2)
    if policy == .all { #expect(received == [0, 1, 2]) }
    #expect(core.metrics.observers == 0)
  }

  @Test("a loop observing an element ends after its last value; the others go on")
  func elementObserverEnds() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(contentsOf: [.addRow(1), .addRow(2)])
    let one = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    let two = try #require(await core.scope(state: \.rows, id: 2, action: BoardAction.rowCase))
    let ones = collect(await one.observe(\.title, buffering: .all))
    let twos = collect(await two.observe(\.title, buffering: .all))
    try await one.dispatch(.setTitle("a"))
    try await core.dispatch(.removeRow(1))
    #expect(await ones.value == ["", "a"])
    try await two.dispatch(.setTitle("b"))
    await core.shutdown()
    #expect(await twos.value == ["", "b"])
  }

  @Test("a removed child's handle refuses actions: send is .childRemoved; enqueue, dispatch and state throw")
  func handleRefusesAfterRemoval() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(contentsOf: [.showDetail, .addRow(1)])
    let detail = try #require(await core.scope(state: \.detail, action: BoardAction.detailCase))
    let row = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    #expect(detail.send(.increment) == .accepted)
    #expect(!detail.isRemoved)
    try await core.dispatch(contentsOf: [.hideDetail, .removeRow(1)])
    for handle in [detail, row] {
      #expect(handle.isRemoved)
      #expect(handle.send(.increment) == .childRemoved)
      #expect(handle.send(contentsOf: [.increment]) == .childRemoved)
      await #expect(throws: CoreError.childRemoved) { try await handle.enqueue(.increment) }
      await #expect(throws: CoreError.childRemoved) { try await handle.dispatch(.increment) }
      await #expect(throws: CoreError.childRemoved) { try await handle.state }
    }
    #expect(await core.state.notes == [])
  }

  @Test("a handle's dispatch sees a removal sent before it, and refuses")
  func dispatchAfterQueuedRemoval() async throws {
    let diagnostics = Events<EffectFailure>()
    let core = BoardFeature.makeCore(diagnostics: diagnostics)
    try await core.dispatch(.addRow(1))
    let row = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    core.send(.removeRow(1))
    await #expect(throws: CoreError.childRemoved) { try await row.dispatch(.increment) }
    #expect(diagnostics.all.isEmpty)
  }

  @Test("scoping to a child that is not there gives nil")
  func scopeToAbsentChild() async throws {
    let core = BoardFeature.makeCore()
    #expect(await core.scope(state: \.detail, action: BoardAction.detailCase) == nil)
    try await core.dispatch(.addRow(1))
    #expect(await core.scope(state: \.rows, id: 2, action: BoardAction.rowCase) == nil)
    #expect(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase) != nil)
  }

  @Test("a subscriber through a removed child's handle ends")
  func subscriberEnds() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.addRow(1))
    let row = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    let counts = Events<Int>()
    let subscriber = await row.subscribe(to: \.count) { counts.record($0) }
    try await row.dispatch(.increment)
    try await core.dispatch(.removeRow(1))
    try await core.dispatch(.addRow(1))  // a new element with the same id
    try await core.dispatch(.row(id: 1, action: .increment))
    #expect(counts.all == [0, 1])
    #expect(!subscriber.isActive)
    #expect(core.metrics.observers == 0)
  }

  @Test("an element put back with the same id is a new child: old handles stay ended")
  func reAddedElement() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.addRow(1))
    let old = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    try await core.dispatch(.removeRow(1))
    try await core.dispatch(.addRow(1))
    #expect(old.send(.increment) == .childRemoved)
    let new = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    try await new.dispatch(.increment)
    #expect(try await new.state.count == 1)
    // The old handle neither reads nor observes the new element.
    #expect(old.isRemoved)
    await #expect(throws: CoreError.childRemoved) { try await old.state }
    // Iterated by hand: a loop that attached to the new element would get
    // its count at once rather than end, and not hang the test.
    var oldCounts = await old.observe(\.count).makeAsyncIterator()
    var oldStates = await old.states().makeAsyncIterator()
    let oldCalls = Events<Int>()
    let oldSubscriber = await old.subscribe(to: \.count) { oldCalls.record($0) }
    try await new.dispatch(.increment)
    #expect(await oldCounts.next() == nil)
    #expect(await oldStates.next() == nil)
    #expect(oldCalls.all.isEmpty)
    #expect(!oldSubscriber.isActive)
    #expect(
      old.scope(state: \.title, action: ActionCase(embed: { (_: Never) -> PanelAction in }, extract: { _ in nil }))
        .isRemoved)
  }

  @Test("a row a reducer beside forEach removes and another puts back is a new child: the old handle never reaches it")
  func putBackBesideForEach() async throws {
    let list = Reduce<Board, BoardAction>.combine([
      Reduce<Board, BoardAction> { _, _ in }
        .forEach(\.rows, action: BoardAction.rowCase, element: PanelFeature.reducer),
      Reduce { state, action in
        switch action {
        case .removeRow(let id): state.rows.removeAll { $0.id == id }
        case .addRow(let id): state.rows.append(Panel(id: id))
        default: break
        }
      },
    ])
    let core = Core(initialState: Board(rows: [Panel(id: 1)]), reducer: list)
    let old = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    var counts = await old.observe(\.count).makeAsyncIterator()
    let calls = Events<Int>()
    let subscriber = await old.subscribe(to: \.count) { calls.record($0) }
    #expect(await counts.next() == 0)
    try await core.dispatch(.removeRow(1))
    try await core.dispatch(.addRow(1))
    #expect(old.isRemoved)
    #expect(old.send(.increment) == .childRemoved)
    await #expect(throws: CoreError.childRemoved) { try await old.dispatch(.increment) }
    await #expect(throws: CoreError.childRemoved) { try await old.state }
    try await core.dispatch(.row(id: 1, action: .increment))  // the new row
    #expect(await core.state.rows == [Panel(id: 1, count: 1)])
    #expect(calls.all == [0])
    #expect(!subscriber.isActive)
    #expect(await counts.next() == nil)
  }

  @Test("handles on one child share one lookup after each action, dropped once they are released")
  func watchesShareAndGo() async throws {
    let core = BoardFeature.makeCore(Board(rows: [Panel(id: 1), Panel(id: 2)]))
    var handles = [
      try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase)),
      try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase)),
      try #require(await core.scope(state: \.rows, id: 2, action: BoardAction.rowCase)),
    ]
    #expect(await core.watchedChildCount == 2)
    try await core.dispatch(.removeRow(2))  // seen by forEach: its watch goes at once
    #expect(await core.watchedChildCount == 1)
    handles.removeAll()
    for _ in 0..<300 { try await core.dispatch(.note("")) }  // released handles' watches go within 256 actions
    #expect(await core.watchedChildCount == 0)
    withExtendedLifetime(handles) {}
  }

  @Test("a handle through an optional ends when ifLet removes the child; a new child is not reached by it")
  func handleThroughAnOptional() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.showDetail)
    let count = try #require(await core.scope(state: \.detail?.count, action: BoardAction.detailCase))
    let counts = collect(await count.observe(\.self, buffering: .all))
    let calls = Events<Int>()
    let subscriber = await count.subscribe(to: \.self) { calls.record($0) }
    try await count.dispatch(.increment)
    try await core.dispatch(.hideDetail)
    #expect(count.isRemoved)
    #expect(count.send(.increment) == .childRemoved)
    #expect(await counts.value == [0, 1])
    try await core.dispatch(.showDetail)  // another detail, at the same place
    #expect(count.send(.increment) == .childRemoved)
    await #expect(throws: CoreError.childRemoved) { try await count.dispatch(.increment) }
    await #expect(throws: CoreError.childRemoved) { try await count.state }
    #expect(await core.state.detail == Panel(id: 100))
    #expect(calls.all == [0, 1])
    #expect(!subscriber.isActive)
  }

  @Test(
    "loops and subscribers through a removed element's handle end on its last value, even put back unseen",
    arguments: [BufferingPolicy.latest, .all])
  func putBackBeforeLooking(policy: BufferingPolicy) async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.addRow(1))
    let row = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    var counts = await row.observe(\.count, buffering: policy).makeAsyncIterator()
    let calls = Events<Int>()
    let subscriber = await row.subscribe(to: \.count, buffering: policy) { calls.record($0) }
    #expect(await counts.next() == 0)
    try await row.dispatch(contentsOf: [.increment, .increment, .increment])
    try await core.dispatch(.removeRow(1))
    try await core.dispatch(.addRow(1))  // another child, with the same id
    try await core.dispatch(.row(id: 1, action: .increment))
    #expect(calls.all == (policy == .all ? [0, 1, 2, 3] : [0, 3]))
    #expect(!subscriber.isActive)
    // Shut down first, so that a loop still on the new child ends too
    // (with its values) rather than wait.
    await core.shutdown()
    var rest: [Int] = []
    while let count = await counts.next() { rest.append(count) }
    #expect(rest == (policy == .all ? [1, 2, 3] : [3]))
  }

  @Test("an Identifiable optional child replaced in one action: its handle's loops and subscribers end")
  func replacedInOneActionEndsObservers() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.showDetail)
    let detail = try #require(await core.scope(state: \.detail, action: BoardAction.detailCase))
    var counts = await detail.observe(\.count).makeAsyncIterator()
    let calls = Events<Int>()
    let subscriber = await detail.subscribe(to: \.count) { calls.record($0) }
    try await detail.dispatch(.increment)
    try await core.dispatch(.replaceDetail(5))  // never nil in between
    try await core.dispatch(.detail(.increment))
    #expect(calls.all == [0, 1])
    #expect(!subscriber.isActive)
    await core.shutdown()  // a loop still on the new child ends too
    var seen: [Int] = []
    while let count = await counts.next() { seen.append(count) }
    #expect(seen == [0, 1] || seen == [1])  // never the new child's
  }

  @Test("an element that gives itself another id leaves: its effects are cancelled, its handles end")
  func elementChangesItsOwnID() async throws {
    let clock = ManualClock()
    let row = Reduce<Panel, PanelAction> { panel, action in
      if case .setTitle("renumber") = action {
        panel.id += 100
        return .none
      }
      return PanelFeature.reducer.reduce(into: &panel, action: action)
    }
    let list = Reduce<Board, BoardAction> { state, action in
      if case .addRow(let id) = action { state.rows.append(Panel(id: id)) }
    }
    .forEach(\.rows, action: BoardAction.rowCase, element: row)
    let diagnostics = Events<EffectFailure>()
    let core = Core(initialState: Board(), clock: clock, diagnostics: { diagnostics.record($0) }, reducer: list)
    try await core.dispatch(.addRow(1))
    let handle = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    try await core.dispatch(.row(id: 1, action: .load("a")))
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.row(id: 1, action: .setTitle("renumber")))
    #expect(handle.isRemoved)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    // The load was cancelled: its `.loaded` for id 1 would have been
    // reported as for a missing child.
    #expect(await core.state.rows.map(\.id) == [101])
    #expect(await core.state.rows.map(\.loaded) == [[]])
    #expect(diagnostics.all.isEmpty)
  }

  @Test("with a hand-written reducer, a handle on an optional child is not on another with another id")
  func handWrittenReplacement() async throws {
    let core = Core<Board, BoardAction>(
      initialState: Board(detail: Panel(id: 1)),
      reducer: Reduce { state, action in
        switch action {
        case .replaceDetail(let id): state.detail = Panel(id: id)
        case .detail(.increment): state.detail?.count += 1
        default: break
        }
      })
    let detail = try #require(await core.scope(state: \.detail, action: BoardAction.detailCase))
    try await core.dispatch(.replaceDetail(2))
    await #expect(throws: CoreError.childRemoved) { try await detail.state }
    await #expect(throws: CoreError.childRemoved) { try await detail.dispatch(.increment) }
    #expect(detail.send(.increment) == .childRemoved)
    #expect(await core.state.detail == Panel(id: 2))
  }

  @Test("with a hand-written reducer, the handle learns of the removal after the action that removed it")
  func handWrittenRemoval() async throws {
    let core = Core<Board, BoardAction>(
      initialState: Board(detail: Panel()),
      reducer: Reduce { state, action in
        switch action {
        case .hideDetail: state.detail = nil
        case .detail(.increment): state.detail?.count += 1
        default: break
        }
      })
    let detail = try #require(await core.scope(state: \.detail, action: BoardAction.detailCase))
    let counts = collect(await detail.observe(\.count))
    try await detail.dispatch(.increment)
    try await core.dispatch(.hideDetail)
    #expect(detail.isRemoved)  // seen after the action that removed it
    #expect(await counts.value.last == 1)
    await #expect(throws: CoreError.childRemoved) { try await detail.state }
    #expect(detail.send(.increment) == .childRemoved)
  }
}

/// A child inside a child: the handles and effects of an element of an
/// optional child end with either.
@Suite("Nested children", .hangDetector)
struct NestedChildTests {
  struct Shelf: Sendable, Equatable {
    var inner: Inner?
    var other = Inner()
  }

  struct Inner: Sendable, Equatable {
    var items: [Panel] = [Panel(id: 1), Panel(id: 2)]
  }

  enum InnerAction: Sendable, Equatable {
    case item(id: Int, action: PanelAction)
    case remove(Int)

    static let itemCase = ActionCase(embed: InnerAction.item) {
      if case .item(let id, let action) = $0 { (id, action) } else { nil }
    }
  }

  enum ShelfAction: Sendable, Equatable {
    case inner(InnerAction)
    case other(InnerAction)
    case open
    case close

    static let innerCase = ActionCase(embed: ShelfAction.inner) {
      if case .inner(let action) = $0 { action } else { nil }
    }
    static let otherCase = ActionCase(embed: ShelfAction.other) {
      if case .other(let action) = $0 { action } else { nil }
    }
  }

  static let inner = Reduce<Inner, InnerAction> { state, action in
    if case .remove(let id) = action { state.items.removeAll { $0.id == id } }
  }
  .forEach(\.items, action: InnerAction.itemCase, element: PanelFeature.reducer)

  static let shelf = Reduce<Shelf, ShelfAction>.combine([
    .scope(state: \.other, action: ShelfAction.otherCase, child: inner),
    Reduce<Shelf, ShelfAction> { state, action in
      switch action {
      case .open: state.inner = Inner()
      case .close: state.inner = nil
      case .inner, .other: break
      }
    }
    .ifLet(\.inner, action: ShelfAction.innerCase, then: inner),
  ])

  @Test("closing the outer child cancels the grandchildren's effects and ends their handles")
  func outerRemovalEndsGrandchildren() async throws {
    let clock = ManualClock()
    let core = Core(initialState: Shelf(), clock: clock, reducer: Self.shelf)
    try await core.dispatch(.open)
    let inner = try #require(await core.scope(state: \.inner, action: ShelfAction.innerCase))
    let item = try #require(await inner.scope(state: \.items, id: 1, action: InnerAction.itemCase))
    let titles = collect(await item.observe(\.title))
    try await item.dispatch(.load("inner"))
    try await core.dispatch(.other(.item(id: 1, action: .load("other"))))
    try await clock.waitForSleepers(atLeast: 2)
    try await core.dispatch(.close)
    #expect(item.isRemoved)
    #expect(inner.isRemoved)
    #expect(item.send(.increment) == .childRemoved)
    #expect(await titles.value == [""])
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.other.items[0].loaded == ["other"])
  }

  @Test("removing a grandchild ends its handle, found by a composed key path too")
  func grandchildRemoval() async throws {
    let core = Core(initialState: Shelf(), reducer: Self.shelf)
    let nested = try #require(
      await core.scope(state: \.other, action: ShelfAction.otherCase).scope(
        state: \.items, id: 2, action: InnerAction.itemCase))
    let otherItem = ActionCase<ShelfAction, (Int, PanelAction)>(
      embed: { ShelfAction.other(.item(id: $0, action: $1)) },
      extract: { if case .other(.item(let id, let action)) = $0 { (id, action) } else { nil } })
    let joined = try #require(await core.scope(state: \.other.items, id: 2, action: otherItem))
    try await core.dispatch(.other(.remove(2)))
    #expect(nested.isRemoved)
    #expect(joined.isRemoved)
  }

  @Test("the same cancel id in two places of the same child type stays apart")
  func cousinsCancelIDs() async throws {
    let clock = ManualClock()
    let core = Core(initialState: Shelf(inner: Inner()), clock: clock, reducer: Self.shelf)
    try await core.dispatch(.inner(.item(id: 1, action: .load("inner"))))
    try await core.dispatch(.other(.item(id: 1, action: .load("other"))))
    try await clock.waitForSleepers(atLeast: 2)
    try await core.dispatch(.other(.item(id: 1, action: .cancelLoad)))
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    let state = await core.state
    #expect(state.inner?.items[0].loaded == ["inner"])
    #expect(state.other.items[0].loaded == [])
  }
}

/// The last value of a child that leaves, however its publications were
/// coalesced.
@Suite("Dynamic children's last values", .hangDetector)
struct DynamicChildLastValueTests {
  @Test("sent in one batch with its removal, a change still reaches observers before they end")
  func lastValueInBatch() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(contentsOf: [.showDetail, .addRow(1)])
    let detail = try #require(await core.scope(state: \.detail, action: BoardAction.detailCase))
    let row = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    let detailCounts = collect(await detail.observe(\.count))
    let rowCounts = collect(await row.observe(\.count))
    let rowCalls = Events<Int>()
    let subscriber = await row.subscribe(to: \.count) { rowCalls.record($0) }
    core.send(contentsOf: [
      .detail(.increment), .detail(.increment), .row(id: 1, action: .increment), .hideDetail, .removeRow(1),
    ])
    #expect(await detailCounts.value.last == 2)
    #expect(await rowCounts.value.last == 1)
    #expect(rowCalls.all == [0, 1])
    #expect(!subscriber.isActive)
  }

  @Test("dispatched back to back with its removal, a change still reaches observers before they end")
  func lastValueDispatched() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.showDetail)
    let detail = try #require(await core.scope(state: \.detail, action: BoardAction.detailCase))
    let counts = collect(await detail.observe(\.count))
    for _ in 0..<5 { try await detail.dispatch(.increment) }
    try await core.dispatch(.hideDetail)
    #expect(await counts.value.last == 5)
  }
}

/// Two elements of a `forEach`'s collection with one id: reported, and
/// the removal of either ends the child with that id.
@Suite("Duplicate ids in a list", .hangDetector)
struct DuplicateElementIDTests {
  struct Rows: Sendable, Equatable {
    var rows: [Panel] = []
  }

  enum Action: Sendable, Equatable {
    case row(id: Int, action: PanelAction)
    case append(Panel)
    case removeAt(Int)
    /// Writes to every row, keeping the ids.
    case retitle(String)

    static let rowCase = ActionCase(embed: Action.row) {
      if case .row(let id, let action) = $0 { (id, action) } else { nil }
    }
  }

  static let logic = Reduce<Rows, Action> { state, action in
    switch action {
    case .append(let panel): state.rows.append(panel)
    case .removeAt(let index): state.rows.remove(at: index)
    case .retitle(let title): for index in state.rows.indices { state.rows[index].title = title }
    case .row: break
    }
  }

  /// A row that gives itself the id 2 on `.setTitle("renumber")`.
  static let row = Reduce<Panel, PanelAction> { panel, action in
    if case .setTitle("renumber") = action {
      panel.id = 2
      return .none
    }
    return PanelFeature.reducer.reduce(into: &panel, action: action)
  }

  /// The list reducer, and the line of its `forEach`.
  static func makeReducer() -> (reducer: Reduce<Rows, Action>, line: UInt) {
    (logic.forEach(\.rows, action: Action.rowCase, element: row), #line)
  }

  static func makeCore(
    _ state: Rows = Rows(), clock: ManualClock = ManualClock(), diagnostics: Events<EffectFailure>
  ) -> Core<Rows, Action> {
    Core(initialState: state, clock: clock, diagnostics: { diagnostics.record($0) }, reducer: makeReducer().reducer)
  }

  @Test("an id the parent gives a second element is reported once, naming the id and the forEach")
  func duplicateReportedOnce() async throws {
    let diagnostics = Events<EffectFailure>()
    let core = Self.makeCore(diagnostics: diagnostics)
    try await core.dispatch(contentsOf: [.append(Panel(id: 1)), .append(Panel(id: 2)), .append(Panel(id: 1))])
    // While it stays: not again, whatever the actions do.
    try await core.dispatch(contentsOf: [.row(id: 1, action: .increment), .retitle("x"), .append(Panel(id: 3))])
    let failures = diagnostics.all
    try #require(failures.count == 1)
    guard case .duplicateID(let id, let collection)? = failures[0].error as? CoreDiagnostic else {
      Issue.record("not a duplicate id: \(failures[0].error)")
      return
    }
    #expect(id == "1")
    #expect(collection == "\\Rows.rows")
    #expect("\(failures[0].fileID)" == "AsyncCoreTests/DynamicChildTests.swift")
    #expect(failures[0].line == Self.makeReducer().line)
    #expect(
      failures[0].description
        == "AsyncCore: more than one element of \\Rows.rows has the id 1: actions for it reach the first "
        + "(the forEach at AsyncCoreTests/DynamicChildTests.swift:\(Self.makeReducer().line))")
    // The actions went to the first row with the id.
    #expect(await core.state.rows.map(\.count) == [1, 0, 0, 0])
    // Gone, then back: a new appearance, reported again.
    try await core.dispatch(.removeAt(0))
    try await core.dispatch(.append(Panel(id: 1)))
    #expect(diagnostics.all.count == 2)
  }

  @Test("an element that gives itself an id another element has is reported")
  func renamedIntoADuplicate() async throws {
    let diagnostics = Events<EffectFailure>()
    let core = Self.makeCore(Rows(rows: [Panel(id: 1), Panel(id: 2)]), diagnostics: diagnostics)
    try await core.dispatch(.row(id: 1, action: .setTitle("renumber")))
    try await core.dispatch(.row(id: 2, action: .increment))
    let ids = diagnostics.all.compactMap { failure -> String? in
      guard case .duplicateID(let id, _)? = failure.error as? CoreDiagnostic else { return nil }
      return id
    }
    #expect(ids == ["2"])
  }

  @Test("removing one of two rows with one id ends that child: its effect never lands on the row that stays")
  func removedDuplicateEnds() async throws {
    let clock = ManualClock()
    let diagnostics = Events<EffectFailure>()
    let core = Self.makeCore(
      Rows(rows: [Panel(id: 1, title: "first"), Panel(id: 1, title: "second")]), clock: clock,
      diagnostics: diagnostics)
    let handle = try #require(await core.scope(state: \.rows, id: 1, action: Action.rowCase))
    try await core.dispatch(.row(id: 1, action: .load("first's")))
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.removeAt(0))
    #expect(handle.isRemoved)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.rows == [Panel(id: 1, title: "second")])
    // The row that stays is a new child with that id, reached as usual.
    try await core.dispatch(.row(id: 1, action: .load("second's")))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.rows == [Panel(id: 1, title: "second", loaded: ["second's"])])
    #expect(diagnostics.all.isEmpty)  // the duplicate was in the initial state: not seen
  }
}

/// A list of lists: sections of rows, each row with an id of its own
/// section's.
@Suite("Missing children inside other children", .hangDetector)
struct NestedMissingChildTests {
  struct Library: Sendable, Equatable {
    var sections: [Section] = []
  }

  struct Section: Sendable, Equatable, Identifiable {
    let id: String
    var rows: [Panel] = []
  }

  enum SectionAction: Sendable, Equatable {
    case row(id: Int, action: PanelAction)

    static let rowCase = ActionCase(embed: SectionAction.row) {
      if case .row(let id, let action) = $0 { (id, action) } else { nil }
    }
  }

  enum LibraryAction: Sendable, Equatable {
    case section(id: String, action: SectionAction)

    static let sectionCase = ActionCase(embed: LibraryAction.section) {
      if case .section(let id, let action) = $0 { (id, action) } else { nil }
    }
  }

  static let section = Reduce<Section, SectionAction> { _, _ in }
    .forEach(\.rows, action: SectionAction.rowCase, element: PanelFeature.reducer)
  static let library = Reduce<Library, LibraryAction> { _, _ in }
    .forEach(\.sections, action: LibraryAction.sectionCase, element: section)

  static func missing(in diagnostics: Events<EffectFailure>) -> [MissingChild] {
    diagnostics.all.compactMap(MissingChild.init)
  }

  @Test("a missing row is named by its whole path from the root, so two sections' rows differ")
  func wholePath() async throws {
    let diagnostics = Events<EffectFailure>()
    let core = Core(
      initialState: Library(sections: [Section(id: "a"), Section(id: "b")]),
      diagnostics: { diagnostics.record($0) }, reducer: Self.library)
    try await core.dispatch(.section(id: "a", action: .row(id: 1, action: .increment)))
    try await core.dispatch(.section(id: "b", action: .row(id: 1, action: .increment)))
    let missing = Self.missing(in: diagnostics)
    try #require(missing.count == 2)
    #expect(missing.map(\.child) == ["\\Library.sections[id: a].rows[id: 1]", "\\Library.sections[id: b].rows[id: 1]"])
    #expect(missing[0].action as? LibraryAction == .section(id: "a", action: .row(id: 1, action: .increment)))
    #expect(diagnostics.all[0].description != diagnostics.all[1].description)
  }

  @Test("a missing grandchild inside an optional child and inside a fixed one are told apart")
  func throughOptionalAndFixed() async throws {
    let diagnostics = Events<EffectFailure>()
    let core = Core(
      initialState: NestedChildTests.Shelf(inner: NestedChildTests.Inner()), diagnostics: { diagnostics.record($0) },
      reducer: NestedChildTests.shelf)
    try await core.dispatch(.inner(.item(id: 9, action: .increment)))
    try await core.dispatch(.other(.item(id: 9, action: .increment)))
    #expect(
      Self.missing(in: diagnostics).map(\.child) == ["\\Shelf.inner?.items[id: 9]", "\\Shelf.other.items[id: 9]"])
  }

  @Test("a long id is cut in the message, on Unicode scalars, with control characters escaped")
  func longIDCut() async throws {
    let diagnostics = Events<EffectFailure>()
    let long = String(repeating: "x", count: 10_000)
    let marks = "e" + String(repeating: "\u{301}", count: 10_000)  // one character
    let core = Core(
      initialState: Library(sections: [Section(id: long), Section(id: marks), Section(id: "a\nb")]),
      diagnostics: { diagnostics.record($0) }, reducer: Self.library)
    for id in [long, marks, "a\nb"] {
      try await core.dispatch(.section(id: id, action: .row(id: 1, action: .increment)))
    }
    let children = Self.missing(in: diagnostics).map(\.child)
    #expect(children.count == 3)
    #expect(
      children.first == "\\Library.sections[id: \(String(repeating: "x", count: 40))… (9960 more bytes)].rows[id: 1]")
    #expect(children.allSatisfy { $0.utf8.count < 120 }, "\(children.map(\.utf8.count))")
    #expect(children.last == #"\Library.sections[id: a\u{A}b].rows[id: 1]"#)
  }

  @Test("a long action is cut in the description, which stays one line")
  func longActionCut() async throws {
    let diagnostics = Events<EffectFailure>()
    let long = String(repeating: "y\n", count: 10_000)
    let core = Core(
      initialState: Library(sections: [Section(id: long)]), diagnostics: { diagnostics.record($0) },
      reducer: Self.library)
    try await core.dispatch(.section(id: long, action: .row(id: 1, action: .increment)))
    let failure = try #require(diagnostics.all.first)
    #expect(failure.description.utf8.count < 600)
    #expect(!failure.description.contains("\n"))
  }
}

/// A ``CoreDiagnostic/childNotFound(child:action:)`` report's values, to
/// compare in tests.
struct MissingChild {
  let child: String
  let action: any Sendable

  /// `failure`'s values, or `nil` if it reports something else.
  init?(_ failure: EffectFailure) {
    guard case .childNotFound(let child, let action)? = failure.error as? CoreDiagnostic else { return nil }
    self.child = child
    self.action = action
  }
}
