import AsyncCore
import Testing

/// Issue 7, items 2 and 3: what an observer is not woken for.
@Suite("Deduplication of observed values", .hangDetector)
struct DeduplicationTests {
  // MARK: - Item 2: .latest compares with what the consumer took

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

  // MARK: - Item 3: Equatable values are deduplicated by every observing call

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
}
