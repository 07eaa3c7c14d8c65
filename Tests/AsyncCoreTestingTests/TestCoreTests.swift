import AsyncCore
import AsyncCoreTesting
import Testing

/// The patterns a test core lets pass: each test here fails if the test core
/// records an issue it should not.
@Suite("TestCore", .timeLimit(.minutes(5)))
struct TestCoreTests {
  let fixture = Fixture()

  @Test("a send checks the change it describes; a send without a closure, that nothing changed")
  func send() async {
    let store = fixture.makeStore()
    await store.send(.increment) { $0.count = 1 }
    await store.send(.increment) { $0.count += 1 }
    await store.send(.noop)
    #expect(store.state.count == 2)
    await store.finish()
  }

  @Test("a .send follow-up is received right after the action that returned it")
  func synchronousFollowUp() async {
    let store = fixture.makeStore()
    await store.send(.echo(5))
    await store.receive(.echoed(5)) { $0.count = 5 }
    await store.finish()
  }

  @Test("actions an effect sends are received in order")
  func effectActions() async {
    let store = fixture.makeStore()
    await store.send(.load) { $0.isLoading = true }
    await store.receive(.loaded(42)) {
      $0.isLoading = false
      $0.count = 42
    }
    await store.send(.loadTwice)
    await store.receive(.loaded(1)) { $0.count = 1 }
    await store.receive(.loaded(2)) { $0.count = 2 }
    await store.finish()
  }

  @Test("receive(where:) matches a case whatever its payload")
  func receiveWhere() async {
    let store = fixture.makeStore()
    await store.send(.load) { $0.isLoading = true }
    await store.receive(
      where: { if case .loaded = $0 { true } else { false } },
      assert: {
        $0.isLoading = false
        $0.count = 42
      })
    await store.finish()
  }

  @Test("a timer driven by a manual clock, stopped by the test, passes")
  func timerStoppedByTheTest() async {
    let store = fixture.makeStore()
    await store.send(.startTimer)
    for count in 1...3 {
      await fixture.clock.waitForSleepers(1)
      await fixture.clock.advance(by: .seconds(1))
      await store.receive(.tick) { $0.count = count }
    }
    await store.send(.stopTimer)
    await store.finish()
  }

  @Test("skipReceivedActions takes the actions received so far and the state they left")
  func skipReceivedActions() async {
    let store = fixture.makeStore()
    await store.send(.echo(5))
    await store.skipReceivedActions()
    #expect(store.state.count == 5)
    await store.send(.increment) { $0.count = 6 }
    await store.finish()
  }

  @Test("skipReceivedActions(strict: false) passes with nothing to skip")
  func skipNothingNotStrict() async {
    let store = fixture.makeStore()
    await store.send(.increment) { $0.count = 1 }
    await store.skipReceivedActions(strict: false)
    #expect(store.state.count == 1)
    await store.finish()
  }

  @Test("skipInFlightEffects stops tracking a timer without cancelling it: its ticks are still received")
  func skipInFlightEffects() async {
    let store = fixture.makeStore()
    await store.send(.startTimer)
    await fixture.clock.waitForSleepers(1)
    await store.skipInFlightEffects()
    await fixture.clock.advance(by: .seconds(1))
    await store.receive(.tick) { $0.count = 1 }
    #expect(fixture.clock.sleeperCount == 1)  // asleep for the next tick
    await store.finish()  // not reported as running; cancelled
    #expect(fixture.clock.sleeperCount == 0)
  }

  @Test("a skipped effect is not reported when the test core goes away")
  func skippedEffectGoingAway() async {
    let store = fixture.makeStore()
    await store.send(.startTimer)
    await store.skipInFlightEffects()
  }

  @Test("an effect started after skipInFlightEffects is tracked as usual")
  func trackedAfterSkipping() async {
    let store = fixture.makeStore()
    await store.send(.startTimer)
    await store.skipInFlightEffects()
    await store.send(.load) { $0.isLoading = true }
    await store.receive(.loaded(42)) {
      $0.isLoading = false
      $0.count = 42
    }
    await store.finish()
  }

  @Test("cancelInFlightEffects cancels the effects, so nothing is left running")
  func cancelInFlightEffects() async {
    let store = fixture.makeStore()
    await store.send(.startTimer)
    await fixture.clock.waitForSleepers(1)
    await store.cancelInFlightEffects()
    #expect(fixture.clock.sleeperCount == 0)
    await store.finish()
  }

  @Test("inside the assert: closure the test core's state is the one before the action; after the call, the new one")
  func stateInsideTheClosure() async {
    let store = fixture.makeStore()
    var seen: [Int] = []
    await store.send(.increment) {
      seen.append(store.state.count)
      $0.count = 1
    }
    #expect(store.state.count == 1)
    await store.send(.load) {
      seen.append(store.state.count)
      $0.isLoading = true
    }
    await store.receive(.loaded(42)) {
      seen.append(store.state.count)
      #expect(store.state.isLoading)
      $0.isLoading = false
      $0.count = 42
    }
    #expect(seen == [0, 1, 1])
    #expect(store.state.count == 42)
    await store.finish()
  }

  @Test("non-exhaustive: a closure naming unchanged fields passes when the action changed others")
  func nonExhaustiveClosureOnOtherFields() async {
    let store = fixture.makeStore(exhaustivity: .off)
    await store.send(.setName("Ada")) { $0.count = 0 }
    await store.finish()
  }

  @Test("a test core that goes away with nothing left records nothing")
  func goingAwayClean() async {
    let store = fixture.makeStore()
    await store.send(.echo(1))
    await store.receive(.echoed(1)) { $0.count = 1 }
  }

  @Test("non-exhaustive: only the fields a closure sets are checked, and nothing left over is reported")
  func nonExhaustive() async {
    let store = fixture.makeStore(exhaustivity: .off)
    await store.send(.setName("Ada"))  // changed, not checked
    await store.send(.load) { $0.isLoading = true }
    await store.send(.loadTwice)
    // Passes over .loaded(42) and .loaded(1), in whichever order the effects ran.
    await store.receive(.loaded(2)) { $0.count = 2 }
    await store.send(.echo(7))  // its follow-up is never received
    await store.send(.startTimer)  // never ends: cancelled by finish, not reported
    await store.finish(timeout: .milliseconds(20))
    #expect(store.state.form.name == "Ada")
  }

  @Test("exhaustivity can be turned off midway")
  func exhaustivityMidway() async {
    let store = fixture.makeStore()
    await store.send(.increment) { $0.count = 1 }
    store.exhaustivity = .off
    await store.send(.echo(3))
    await store.finish()
    #expect(store.state.count == 3)
  }

  @Test("a @MainActor test uses a test core on the main actor")
  @MainActor
  func mainActor() async {
    let store = fixture.makeStore()
    await store.send(.load) { $0.isLoading = true }
    await store.receive(.loaded(42)) {
      $0.isLoading = false
      $0.count = 42
    }
    await store.finish()
  }

  @Test("a reducer that starts no effects makes a test core too")
  func pureReducer() async {
    let store = TestCore(initialState: StepCounter(), reducer: Reduce(reduceStepCounter))
    await store.send(.increment) { $0.count = 1 }
    await store.finish()
  }
}

/// Effects that sleep on a manual clock until the same instant.
@Suite("TestCore with a manual clock", .timeLimit(.minutes(5)))
struct TestCoreClockTests {
  struct Naps: Sendable, Equatable {
    var woke: [Int] = []
  }

  enum NapAction: Sendable, Equatable {
    /// Does some work (`busy` yields), then sleeps one second and sends `.woke(number)`.
    case nap(Int, busy: Int)
    case woke(Int)
  }

  @Test(
    "two effects sleeping until one instant send in the order they were started, whichever reached its sleep first",
    arguments: 0..<50)
  func sameDeadlineInStartOrder(round: Int) async {
    let clock = ManualClock()
    let store = TestCore<Naps, NapAction>(initialState: Naps(), clock: clock, timeout: Fixture.timeout) {
      state, action in
      switch action {
      case .nap(let number, let busy):
        return .run { send in
          for _ in 0..<busy { await Task.yield() }
          try await send.clock.sleep(for: .seconds(1))
          await send(.woke(number))
        }
      case .woke(let number):
        state.woke.append(number)
        return .none
      }
    }
    // The first does more work before it sleeps: its task is likely to get
    // there second. Both sleep at the clock's time zero.
    await store.send(.nap(1, busy: 20))
    await store.send(.nap(2, busy: 0))
    await clock.waitForSleepers(2)
    await clock.advance(by: .seconds(1))
    await store.receive(.woke(1)) { $0.woke = [1] }
    await store.receive(.woke(2)) { $0.woke = [1, 2] }
    await store.finish()
  }
}
