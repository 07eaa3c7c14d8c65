import AsyncCore
import Testing

/// `core.scope(…)` handles observe a part of the state and send
/// the child's actions into the parent.
@Suite("Scoped handles", .hangDetector)
struct ScopedCoreTests {
  @Test("a handle's actions reach the core as the parent's, in order")
  func sendAndDispatch() async throws {
    let core = BoardFeature.makeCore()
    let log = collect(await core.actions())
    let left = core.scope(state: \.left, action: BoardAction.leftCase)
    #expect(left.send(.increment) == .accepted)
    #expect(left.send(contentsOf: [.setTitle("a"), .increment]) == .accepted)
    try await left.dispatch(.increment)
    try await left.dispatch(contentsOf: [.setTitle("b")])
    #expect(try await left.state == Panel(count: 3, title: "b"))
    await core.shutdown()
    #expect(
      await log.value.map(\.action) == [
        .left(.increment), .left(.setTitle("a")), .left(.increment), .left(.increment), .left(.setTitle("b")),
      ])
  }

  @Test("enqueue through a handle: 4 producers × 2,000 into a mailbox of 8, each reduced as the parent's, none lost")
  func enqueueThroughAHandle() async throws {
    let core = BoardFeature.makeCore(mailboxCapacity: 8)
    let left = core.scope(state: \.left, action: BoardAction.leftCase)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask { for _ in 0..<2_000 { try await left.enqueue(.increment) } }
      }
      try await group.waitForAll()
    }
    #expect(try await left.state.count == 8_000)
    #expect(core.metrics.queueHighWaterMark <= 8)
    await core.shutdown()
    await #expect(throws: CoreError.shutDown) { try await left.enqueue(.increment) }
  }

  @Test("observing through a handle: the current value first, then each change", arguments: [BufferingPolicy.all])
  func observe(policy: BufferingPolicy) async throws {
    let core = BoardFeature.makeCore(Board(left: Panel(count: 5)))
    let left = core.scope(state: \.left, action: BoardAction.leftCase)
    let byKeyPath = collect(await left.observe(\.count, buffering: policy))
    let byClosure = collect(await left.observe({ $0.count * 10 }, buffering: policy))
    let states = collect(await left.states(buffering: policy))
    let everyTitle = collect(
      await left.observe(\.title, removeDuplicates: { _, _ in false }, buffering: policy))
    try await left.dispatch(.increment)
    try await left.dispatch(.setTitle("t"))
    try await core.dispatch(.right(.increment))  // not the left's: no new value
    try await left.dispatch(.increment)
    await core.shutdown()
    #expect(await byKeyPath.value == [5, 6, 7])
    #expect(await byClosure.value == [50, 60, 70])
    #expect(await states.value.map(\.count) == [5, 6, 6, 7])
    #expect(await everyTitle.value == ["", "", "t", "t", "t"])
  }

  @Test("observers of one value through handles on one child share one group, apart from the core's")
  func sharedGroup() async throws {
    let core = BoardFeature.makeCore()
    let left = core.scope(state: \.left, action: BoardAction.leftCase)
    let direct = collect(await core.observe(\.left.count))
    let scoped = collect(await left.observe(\.count))
    let again = collect(await core.scope(state: \.left, action: BoardAction.leftCase).observe(\.count))
    #expect(await core.keyPathGroupCount == 2)
    try await left.dispatch(.increment)
    await core.shutdown()
    for task in [direct, scoped, again] { #expect(await task.value.last == 1) }
  }

  @Test("a subscriber through a handle is called with the current value, then each change")
  func subscribe() async throws {
    let core = BoardFeature.makeCore()
    let right = core.scope(state: \.right, action: BoardAction.rightCase)
    let counts = Events<Int>()
    let titles = Events<String>()
    let everyCall = Events<Int>()
    let byKeyPath = await right.subscribe(to: \.count) { counts.record($0) }
    let title: @Sendable (Panel) -> String = { $0.title }
    let byClosure = await right.subscribe(to: title) { titles.record($0) }
    let never: @Sendable (Int, Int) -> Bool = { _, _ in false }
    let undeduplicated = await right.subscribe(to: \.count, removeDuplicates: never) { everyCall.record($0) }
    try await right.dispatch(.increment)
    try await right.dispatch(.setTitle("r"))
    #expect(counts.all == [0, 1])
    #expect(titles.all == ["", "r"])
    #expect(everyCall.all == [0, 1, 1])
    for subscriber in [byKeyPath, byClosure, undeduplicated] { subscriber.cancel() }
  }

  @Test("a handle refuses actions once the core has begun to shut down")
  func refusedAfterShutdown() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(.addRow(1))
    let left = core.scope(state: \.left, action: BoardAction.leftCase)
    let row = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    await core.shutdown()
    for handle in [left, row] {
      #expect(handle.hasShutDown)
      #expect(handle.send(.increment) == .shutDown)
      await #expect(throws: CoreError.shutDown) { try await handle.dispatch(.increment) }
      #expect(try await handle.state.count == 0)
      #expect(await collect(handle.observe(\.count)).value == [0])  // the final value, then the end
    }
  }

  @Test("scoping a handle further: fixed parts join, actions embed through every level")
  func nestedFixedScopes() async throws {
    let core = BoardFeature.makeCore()
    let left = core.scope(state: \.left, action: BoardAction.leftCase)
    let setTitle = ActionCase(embed: PanelAction.setTitle) { if case .setTitle(let title) = $0 { title } else { nil } }
    let title = left.scope(state: \.title, action: setTitle)
    let titles = collect(await title.states(buffering: .all))
    #expect(title.send("hello") == .accepted)
    try await title.dispatch("world")
    #expect(try await title.state == "world")
    await core.shutdown()
    #expect(await titles.value == ["", "hello", "world"])
  }

  @Test("an element handle sends to its own element")
  func elementHandle() async throws {
    let core = BoardFeature.makeCore()
    try await core.dispatch(contentsOf: [.addRow(1), .addRow(2)])
    let two = try #require(await core.scope(state: \.rows, id: 2, action: BoardAction.rowCase))
    try await two.dispatch(.increment)
    #expect(await core.state.rows.map(\.count) == [0, 1])
    #expect(try await two.state.id == 2)
  }
}
