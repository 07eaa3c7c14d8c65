import AsyncCore
import Testing

/// What an observer is not woken for.
@Suite("Deduplication of observed values", .hangDetector)
struct DeduplicationTests {
  // MARK: - .latest compares with what the consumer took

  @Test("under .latest, a value equal to the one the consumer last took is not delivered again")
  func latestComparesWithWhatTheConsumerTook() async throws {
    let core = makeCounterCore()
    var counts = await core.observe(\.count).makeAsyncIterator()
    #expect(await counts.next() == 0)  // taken
    try await core.dispatch(.add(1))  // published, not taken
    try await core.dispatch(.add(-1))  // 0 again: what the consumer already holds
    await core.shutdown()
    #expect(await counts.next() == nil)  // no second 0: the loop just ends
  }

  @Test("under .latest with removeDuplicates:, the comparison is with what the consumer took")
  func latestCustomComparisonUsesWhatTheConsumerTook() async throws {
    let core = makeCounterCore()
    var labels = await core.observe(\.label, removeDuplicates: { $0 == $1 }).makeAsyncIterator()
    #expect(await labels.next() == "")
    try await core.dispatch(.setLabel("a"))
    try await core.dispatch(.setLabel(""))
    try await core.dispatch(.increment)  // a publication that changes nothing observed
    try await core.dispatch(.setLabel("b"))
    _ = await core.state  // publishes what the back-to-back dispatches left
    #expect(await labels.next() == "b")  // the next value that differs from ""
    try await core.dispatch(.setLabel("c"))
    try await core.dispatch(.setLabel("b"))
    await core.shutdown()
    #expect(await labels.next() == nil)
  }

  // MARK: - Equatable values are deduplicated by every observing call

  @Test("states(buffering: .all) delivers each state that differs from the one before; actions() every action")
  func everyStateObserverSkipsEqualStates() async throws {
    let core = makeCounterCore()
    let states = collect(await core.states(buffering: .all))
    let actions = collect(await core.actions())
    try await core.dispatch(.setLabel(""))  // no change
    try await core.dispatch(.setLabel("x"))
    try await core.dispatch(.setLabel("x"))  // no change
    try await core.dispatch(.setLabel(""))  // equal to an earlier state, not to the one before
    core.send(.add(0))  // no change
    await core.shutdown()
    #expect(await states.value.map(\.label) == ["", "x", ""])
    // The action log is not deduplicated.
    let reduced: [CounterAction] = [.setLabel(""), .setLabel("x"), .setLabel("x"), .setLabel(""), .add(0)]
    #expect(await actions.value.map(\.action) == reduced)
  }

  @Test("states() under .latest does not wake its consumer for an equal state")
  func latestStateObserverSkipsEqualStates() async throws {
    let core = makeCounterCore()
    var states = await core.states().makeAsyncIterator()
    #expect(await states.next() == Counter())
    try await core.dispatch(.setLabel(""))  // publishes an equal state
    try await core.dispatch(.add(0))
    await core.shutdown()
    #expect(await states.next() == nil)
  }

  /// Observes `select` from code that does not know whether `Value` is Equatable.
  static func observeAll<Value: Sendable>(
    _ core: CounterCore,
    _ select: @escaping @Sendable (Counter) -> Value
  ) async -> CoreStream<Value> {
    await core.observe(select, buffering: .all)
  }

  @Test("generic code observing a value whose type is Equatable is deduplicated too")
  func genericObserverIsDeduplicated() async throws {
    let core = makeCounterCore()
    let counts = collect(await Self.observeAll(core, \.count))
    let wholeStates = collect(await Self.observeAll(core) { $0 })
    try await core.dispatch(.setLabel(""))
    try await core.dispatch(.increment)
    try await core.dispatch(.add(0))
    await core.shutdown()
    #expect(await counts.value == [0, 1])
    #expect(await wholeStates.value.map(\.count) == [0, 1])
  }

  @Test("a value behind an existential whose dynamic type is Equatable is deduplicated too")
  func existentialObserverIsDeduplicated() async throws {
    let core = makeCounterCore()
    let counts = collect(await core.observe({ $0.count as any Sendable }, buffering: .all))
    try await core.dispatch(.setLabel("no count change"))
    try await core.dispatch(.increment)
    try await core.dispatch(.add(0))
    await core.shutdown()
    #expect(await counts.value.compactMap { $0 as? Int } == [0, 1])
  }

  // MARK: - removeDuplicates: nil, the default

  @Test("removeDuplicates: nil compares an Equatable value with ==: key paths, closures, states() and subscribers")
  func defaultComparisonIsEqualityForEquatable() async throws {
    let core = makeCounterCore()
    let byKeyPath = collect(await core.observe(\.count, removeDuplicates: nil, buffering: .all))
    let byClosure = collect(await core.observe({ $0.count * 2 }, removeDuplicates: nil, buffering: .all))
    let states = collect(await core.states(removeDuplicates: nil, buffering: .all))
    let calls = Events<Int>()
    let subscriber = await core.subscribe(to: \.count, removeDuplicates: nil, buffering: .all) { calls.record($0) }
    try await core.dispatch(.setLabel(""))  // nothing changes
    try await core.dispatch(.increment)
    try await core.dispatch(.setLabel("x"))  // the count does not change
    await core.shutdown()
    #expect(await byKeyPath.value == [0, 1])
    #expect(await byClosure.value == [0, 2])
    #expect(await states.value.map(\.count) == [0, 1, 1])
    #expect(await states.value.map(\.label) == ["", "", "x"])
    #expect(calls.all == [0, 1])
    withExtendedLifetime(subscriber) {}
  }

  /// A value whose type is not `Equatable`.
  struct Plain: Sendable {
    var value = 0
  }

  struct Holder: Sendable {
    var plain = Plain()
    var other = 0
  }

  @Test("removeDuplicates: nil delivers every publication of a value that is not Equatable, and nothing more")
  func defaultComparisonDeliversEveryPublicationOtherwise() async throws {
    let core = Core<Holder, Int>(
      initialState: Holder(),
      reducer: Reduce { state, action in
        if action == 0 { state.other += 1 } else { state.plain.value = action }
      })
    let first = collect(await core.observe(\.plain, removeDuplicates: nil, buffering: .all))
    // A second observer of the key path has a group of its own: joining a
    // shared one would hand the first the current value again.
    let second = collect(await core.observe(\.plain, buffering: .all))
    let calls = Events<Int>()
    let subscriber = await core.subscribe(to: \.plain, buffering: .all) { calls.record($0.value) }
    #expect(await core.keyPathGroupCount == 0)
    try await core.dispatch(0)  // the plain value does not change: delivered all the same
    try await core.dispatch(5)
    await core.shutdown()
    #expect(await first.value.map(\.value) == [0, 0, 5])
    #expect(await second.value.map(\.value) == [0, 0, 5])
    #expect(calls.all == [0, 0, 5])
    withExtendedLifetime(subscriber) {}
  }

  @Test("a removeDuplicates closure wins over ==, and its observer does not join the key path's shared group")
  func customComparisonWins() async throws {
    let core = makeCounterCore()
    let byDefault = collect(await core.observe(\.count, buffering: .all))
    let every = collect(await core.observe(\.count, removeDuplicates: { _, _ in false }, buffering: .all))
    let firstOnly = collect(await core.observe(\.count, removeDuplicates: { _, _ in true }, buffering: .all))
    let byParity = collect(await core.states(removeDuplicates: { $0.count % 2 == $1.count % 2 }, buffering: .all))
    #expect(await core.keyPathGroupCount == 1)  // the default one's
    try await core.dispatch(.setLabel("a"))
    try await core.dispatch(.add(2))
    try await core.dispatch(.increment)
    await core.shutdown()
    #expect(await byDefault.value == [0, 2, 3])
    #expect(await every.value == [0, 0, 2, 3])
    #expect(await firstOnly.value == [0])
    #expect(await byParity.value.map(\.count) == [0, 3])
  }

  @Test("states(removeDuplicates:buffering:) takes a comparison; { _, _ in false } opts out of deduplication")
  func statesRemoveDuplicates() async throws {
    let core = makeCounterCore()
    let everyPublication = collect(await core.states(removeDuplicates: { _, _ in false }, buffering: .all))
    let byCount = collect(await core.states(removeDuplicates: { $0.count == $1.count }, buffering: .all))
    let everyCount = collect(await core.observe(\.count, removeDuplicates: { _, _ in false }, buffering: .all))
    try await core.dispatch(.setLabel(""))  // publishes an equal state
    try await core.dispatch(.setLabel("x"))
    try await core.dispatch(.increment)
    await core.shutdown()
    #expect(await everyPublication.value.map(\.label) == ["", "", "x", "x"])
    #expect(await byCount.value.map(\.count) == [0, 1])
    #expect(await everyCount.value == [0, 0, 0, 1])
  }
}
