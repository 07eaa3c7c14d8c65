import AsyncCore
import AsyncCoreTesting
import Testing

@Suite("Effects", .hangDetector)
struct EffectTests {
  enum Action: Sendable, Equatable {
    case start
    case append(String)
  }

  /// A core whose `.start` runs `effect` and whose `.append` logs.
  func makeCore(
    clock: any Clock<Duration> = ContinuousClock(),
    effect: @escaping @Sendable () -> Effect<Action>
  ) -> Core<[String], Action> {
    Core(initialState: [], clock: clock) { log, action in
      switch action {
      case .start:
        return effect()
      case .append(let entry):
        log.append(entry)
        return .none
      }
    }
  }

  @Test("an effect's follow-ups are reduced in the order it sent them")
  func followUpsInOrder() async throws {
    let core = makeCore {
      .run { send in
        for index in 0..<100 { await send(.append("\(index)")) }
      }
    }
    try await core.dispatch(.start).finish()
    #expect(await core.state == (0..<100).map(String.init))
  }

  @Test(".send returns an action after the one that returned it")
  func sendEffect() async throws {
    let core = makeCore { .merge([.send(.append("a")), .send(.append("b"))]) }
    try await core.dispatch(.start).finish()
    #expect(await core.state == ["a", "b"])
  }

  @Test("merge runs its effects at the same time")
  func mergeIsConcurrent() async throws {
    let barrier = Barrier(parties: 2)
    let core = makeCore {
      .merge([
        .run { send in
          await barrier.arriveAndWait()  // only passes if the other is running too
          await send(.append("a"))
        },
        .run { send in
          await barrier.arriveAndWait()
          await send(.append("b"))
        },
      ])
    }
    try await core.dispatch(.start).finish()
    #expect(await core.state.sorted() == ["a", "b"])
  }

  @Test("concatenate runs its effects one after another")
  func concatenateIsSequential() async throws {
    let clock = ManualClock()
    let events = Events<String>()
    let core = makeCore(clock: clock) {
      .concatenate([
        .run { send in
          events.record("first started")
          try await send.clock.sleep(for: .seconds(1))
          events.record("first ended")
        },
        .run { _ in events.record("second started") },
      ])
    }
    let effects = try await core.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 1)
    #expect(events.all == ["first started"])  // the second waits for the first
    await clock.advance(by: .seconds(1))
    try await effects.finish()
    #expect(events.all == ["first started", "first ended", "second started"])
  }

  @Test("cancellable(id:cancelInFlight: true) keeps only the newest: search as you type")
  func searchAsYouType() async throws {
    struct SearchID: Hashable, Sendable {}
    enum SearchAction: Sendable {
      case queryChanged(String)
      case resultsLoaded(String)
    }
    let clock = ManualClock()
    let core = Core<[String], SearchAction>(initialState: [], clock: clock) { results, action in
      switch action {
      case .queryChanged(let query):
        return .run { send in
          try await send.clock.sleep(for: .milliseconds(300))  // debounce
          await send(.resultsLoaded(query.uppercased()))
        }
        .cancellable(id: SearchID(), cancelInFlight: true)
      case .resultsLoaded(let result):
        results.append(result)
        return .none
      }
    }
    for query in ["s", "sw", "swi"] {
      try await core.dispatch(.queryChanged(query))
      try await clock.waitForSleepers(atLeast: 1)  // this query's debounce; the one before was cancelled
      #expect(clock.sleeperCount == 1)
    }
    try await core.dispatch(.queryChanged("swift"))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .milliseconds(300))
    try await core.waitUntilIdle()
    #expect(await core.state == ["SWIFT"])
  }

  enum TimerAction: Sendable { case start, stop, tick }
  struct TimerID: Hashable, Sendable {}

  func makeTimer(clock: ManualClock) -> Core<Int, TimerAction> {
    Core(initialState: 0, clock: clock) { ticks, action in
      switch action {
      case .start:
        return .run { send in
          while true {
            try await send.clock.sleep(for: .seconds(1))
            await send(.tick)
          }
        }
        .cancellable(id: TimerID())
      case .stop:
        return .cancel(id: TimerID())
      case .tick:
        ticks += 1
        return .none
      }
    }
  }

  @Test(".cancel(id:) stops a running effect")
  func cancelStopsRunningEffect() async throws {
    let clock = ManualClock()
    let core = makeTimer(clock: clock)
    try await core.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(atLeast: 1)  // ticked and asleep again
    #expect(await core.state == 1)
    try await core.dispatch(.stop)
    try await core.waitUntilIdle()  // returns only because the timer ended
    #expect(clock.sleeperCount == 0)
    await clock.advance(by: .seconds(10))
    #expect(await core.state == 1)
  }

  @Test("two cores' cancel ids are independent")
  func cancelIDsArePerCore() async throws {
    let clock = ManualClock()
    let first = makeTimer(clock: clock)
    let second = makeTimer(clock: clock)
    try await first.dispatch(.start)
    try await second.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 2)
    try await first.dispatch(.stop)  // the same TimerID, another core
    try await first.waitUntilIdle()
    #expect(clock.sleeperCount == 1)
    await clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(atLeast: 1)
    #expect(await second.state == 1)
    #expect(await first.state == 0)
    try await second.dispatch(.stop)
  }

  @Test("10,000 effects started and finished")
  func tenThousandEffects() async throws {
    let core = Core<Int, Bool>(initialState: 0) { finished, isFollowUp in
      if isFollowUp {
        finished += 1
        return .none
      }
      return .run { send in await send(true) }
    }
    try await core.dispatch(contentsOf: Array(repeating: false, count: 10_000)).finish()
    #expect(await core.state == 10_000)
  }

  @Test("10,000 effects cancelled by shutdown: none sends afterwards")
  func shutdownCancelsEffects() async throws {
    let clock = ManualClock()
    let results = Events<SendResult>()
    let core = Core<Int, Bool>(initialState: 0, clock: clock) { late, isLate in
      if isLate {
        late += 1
        return .none
      }
      return .run { send in
        do {
          try await send.clock.sleep(for: .seconds(3_600))
        } catch {
          results.record(await send(true))  // after cancellation: refused
        }
      }
    }
    try await core.dispatch(contentsOf: Array(repeating: false, count: 10_000))
    try await clock.waitForSleepers(atLeast: 10_000)
    await core.shutdown(.immediate)
    #expect(clock.sleeperCount == 0)
    #expect(results.all.count == 10_000)
    #expect(results.all.allSatisfy { $0 == .shutDown })
    #expect(await core.state == 0)
  }

  struct Failure: Error, Equatable {}

  @Test("an effect's error reaches its catch action")
  func caughtError() async throws {
    let core = makeCore {
      .run { _ in
        throw Failure()
      } catch: { error, send in
        await send(.append("caught \(error)"))
      }
    }
    try await core.dispatch(.start).finish()
    #expect(await core.state == ["caught Failure()"])
  }

  @Test("an uncaught error reaches the diagnostics hook with the effect's location; CancellationError does not")
  func uncaughtErrorIsReported() async throws {
    let failures = Events<EffectFailure>()
    let line = Box(UInt(0))
    let reducer = Reduce<Int, Int> { _, action in
      if action == 0 { return .run { _ in throw CancellationError() } }
      line.set(#line + 1)
      return .run { _ in throw Failure() }
    }
    let core = Core(initialState: 0, diagnostics: { failures.record($0) }, reducer: reducer)
    try await core.dispatch(0).finish()
    #expect(failures.all.isEmpty)
    try await core.dispatch(1).finish()
    let failure = try #require(failures.all.first)
    #expect(failures.all.count == 1)
    #expect(failure.error as? Failure == Failure())
    #expect("\(failure.fileID)" == "AsyncCoreTests/EffectTests.swift")
    #expect(failure.line == line.value)
    #expect(failure.description.contains("EffectTests.swift:\(line.value)"))
  }

  @Test("map lifts a child's effects into the parent's actions")
  func mapEffect() async throws {
    enum Child: Sendable { case loaded(Int) }
    let childEffect = Effect<Child>.merge([
      .send(.loaded(1)),
      .run { send in await send(.loaded(2)) }.cancellable(id: "child"),
      .concatenate([.run { send in await send(.loaded(3)) }, .none]),
    ])
    let core = makeCore {
      childEffect.map { child in
        guard case .loaded(let value) = child else { return .append("?") }
        return .append("child \(value)")
      }
    }
    try await core.dispatch(.start).finish()
    #expect(await core.state.sorted() == ["child 1", "child 2", "child 3"])
  }

  @Test("awaiting an action's effects covers their follow-ups' effects, exactly")
  func awaitingEffectsIsExact() async throws {
    // .countdown(n) records n and, above 0, sends .countdown(n - 1) from an effect.
    let core = Core<[Int], Int>(initialState: []) { log, n in
      log.append(n)
      guard n > 0 else { return .none }
      return .run { send in await send(n - 1) }
    }
    let effects = try await core.dispatch(3)
    try await effects.finish()
    #expect(effects.isFinished)
    #expect(await core.state == [3, 2, 1, 0])

    let none = try await core.dispatch(0)  // starts nothing
    #expect(none.isFinished)

    core.send(2)
    try await core.waitUntilIdle()
    #expect(await core.state == [3, 2, 1, 0, 0, 2, 1, 0])
  }
}
