import AsyncCore
import Testing

@Suite("Core dispatch and lifecycle", .hangDetector)
struct CoreTests {
  @Test("dispatch returns after the reducer ran")
  func dispatchReduces() async throws {
    let core = makeCounterCore()
    try await core.dispatch(.increment)
    #expect(await core.state.count == 1)
    try await core.dispatch(.add(41))
    #expect(await core.state.count == 42)
  }

  @Test("a multi-statement reducer without effects needs no `return .none`")
  func multiStatementPureReducer() async throws {
    // Type-checks against both of Reduce's initializers; the pure one must win.
    let core = Core<Counter, CounterAction>(
      initialState: Counter(),
      reducer: Reduce { state, action in
        state.count += 1
        state.label = "\(action)"
      })
    try await core.dispatch(.increment)
    #expect(await core.state == Counter(count: 1, label: "increment"))
  }

  @Test("metrics counts observers, subscribers and handles' observers, and effects in flight, read without waiting")
  func metricsSnapshot() async throws {
    let core = BoardFeature.makeCore()
    #expect(core.metrics.observers == 0)
    #expect(core.metrics.effectsInFlight == 0)
    let counts = await core.observe(\.left.count)
    let subscriber = await core.subscribe(to: \.notes) { _ in }
    let titles = await core.scope(state: \.left, action: BoardAction.leftCase).observe(\.title)
    try await core.dispatch(.left(.load("a")))  // sleeps on the core's manual clock
    // A snapshot read from synchronous code: no hop to the core.
    let metrics = core.metrics
    #expect(metrics.observers == 3)
    #expect(metrics.effectsInFlight == 1)
    subscriber.cancel()
    try await core.dispatch(.left(.cancelLoad))
    try await core.waitUntilIdle()
    #expect(core.metrics.observers == 2)
    #expect(core.metrics.effectsInFlight == 0)
    withExtendedLifetime((counts, titles)) {}
  }

  @Test("a reducer that reaches back into its own core stops the program with a message")
  func reentrantReducerIsAProgrammerError() async {
    await #expect(processExitsWith: .failure) {
      let box = Box<Core<Int, Int>?>(nil)
      let core = Core<Int, Int>(
        initialState: 0,
        reducer: Reduce { state, _ in
          state += 1
          // Reading the core's state from inside its reducer.
          if let core = box.value { core.assumeIsolated { $0.cancelEffects(id: 1) } }
        })
      box.set(core)
      _ = try? await core.dispatch(1)
    }
  }

  @Test("one sender's sends are reduced in send order")
  func sendOrder() async {
    let core = makeCounterCore()
    for sequence in 0..<10_000 {
      #expect(core.send(.sequenced(sender: 0, sequence: sequence)) == .accepted)
    }
    let state = await core.state
    #expect(state.count == 10_000)
    #expect(state.lastSequence[0] == 9_999)
    #expect(state.outOfOrder == 0)
  }

  enum Route: String, CaseIterable, Sendable {
    case send, dispatch, sendAndDispatch, batches
  }

  @Test("8 concurrent senders × 10,000 actions: all counted, each sender in order", arguments: Route.allCases)
  func concurrentSenders(route: Route) async throws {
    let core = makeCounterCore()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for sender in 0..<8 {
        group.addTask {
          switch route {
          case .send:
            for sequence in 0..<10_000 {
              core.send(.sequenced(sender: sender, sequence: sequence))
              // `send` never suspends: without a yield each sender would
              // hold a thread of the pool for its whole loop (seconds under
              // ThreadSanitizer), starving every other test of the suite.
              if sequence % 1_000 == 999 { await Task.yield() }
            }
          case .dispatch:
            for sequence in 0..<10_000 { try await core.dispatch(.sequenced(sender: sender, sequence: sequence)) }
          case .sendAndDispatch:
            // Alternating routes from one task still keeps its order.
            for sequence in 0..<10_000 {
              let action = CounterAction.sequenced(sender: sender, sequence: sequence)
              if sequence.isMultiple(of: 2) { core.send(action) } else { try await core.dispatch(action) }
            }
          case .batches:
            for start in stride(from: 0, to: 10_000, by: 100) {
              let batch = (start..<start + 100).map { CounterAction.sequenced(sender: sender, sequence: $0) }
              if start.isMultiple(of: 200) {
                core.send(contentsOf: batch)
              } else {
                try await core.dispatch(contentsOf: batch)
              }
            }
          }
        }
      }
      try await group.waitForAll()
    }
    let state = await core.state
    #expect(state.count == 80_000)
    #expect(state.outOfOrder == 0)
    #expect(state.lastSequence == Dictionary(uniqueKeysWithValues: (0..<8).map { ($0, 9_999) }))
  }

  @Test("an action sent before dispatch is reduced before it")
  func sendThenDispatch() async throws {
    let core = Core(initialState: [String](), reducer: Reduce { log, action in log.append(action) })
    core.send("first")
    try await core.dispatch("second")
    core.send("third")
    #expect(await core.state == ["first", "second", "third"])
  }

  @Test("sends accepted before the last reference goes are still reduced")
  func sendsOutliveTheCaller() async {
    var core: CounterCore? = makeCounterCore()
    let states = await core!.states(buffering: .all)
    for _ in 0..<1_000 { core!.send(.increment) }
    core = nil
    let received = await collect(states).value.map(\.count)
    #expect(received == Array(0...1_000))
  }

  @Test("after shutdown, dispatch throws, send is refused and the state is kept")
  func shutdownRefusesActions() async throws {
    let core = makeCounterCore()
    core.send(.increment)
    await core.shutdown()
    #expect(core.hasShutDown)
    #expect(await core.state.count == 1)  // accepted before shutdown: reduced
    #expect(core.send(.increment) == .shutDown)
    #expect(core.send(contentsOf: [.increment]) == .shutDown)
    await #expect(throws: CoreError.shutDown) { try await core.dispatch(.increment) }
    await #expect(throws: CoreError.shutDown) { try await core.dispatch(contentsOf: [.increment]) }
    #expect(await core.state.count == 1)
    await core.shutdown()  // a second call does nothing
    #expect(await core.state.count == 1)
  }

  @Test("shutdown ends every observer's loop after the final state")
  func shutdownEndsObservers() async throws {
    let core = makeCounterCore()
    let latest = collect(await core.observe(\.count))
    let every = collect(await core.states(buffering: .all))
    let log = collect(await core.actions())
    for _ in 0..<3 { try await core.dispatch(.increment) }
    core.send(.increment)
    await core.shutdown()
    #expect(core.metrics.observers == 0)
    #expect(await latest.value.last == 4)
    #expect(await every.value.map(\.count) == [0, 1, 2, 3, 4])
    #expect(await log.value.count == 4)
  }

  @Test("observing a core that has shut down yields its final state and ends")
  func observeAfterShutdown() async throws {
    let core = makeCounterCore()
    try await core.dispatch(.add(7))
    await core.shutdown()
    #expect(await collect(core.observe(\.count)).value == [7])
    #expect(await collect(core.actions()).value.isEmpty)
    #expect(core.metrics.observers == 0)
  }

  @Test("releasing the last reference ends every observer's loop after the final state")
  func releaseEndsObservers() async throws {
    var core: CounterCore? = makeCounterCore()
    let latest = collect(await core!.observe(\.count))
    let every = collect(await core!.states(buffering: .all))
    try await core!.dispatch(.increment)
    try await core!.dispatch(.increment)
    weak let released = core
    core = nil
    // The loops end when the core goes, which is once the drain has
    // published what the last dispatch left to it.
    #expect(await latest.value.last == 2)
    #expect(await every.value.map(\.count) == [0, 1, 2])
    #expect(released == nil)
  }
}
