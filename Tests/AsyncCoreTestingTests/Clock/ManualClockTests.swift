import AsyncCore
import AsyncCoreTesting
import Testing

/// The manual clock, driven the way tests drive it. Order and "the woken
/// effect has run" are checked with effects of a core, the clock's main
/// use: an advance follows each woken effect until it sleeps again or ends,
/// so these tests need no `Task.yield` and no real time.
///
/// The time limit is a hang detector, not a speed target: CI runs the
/// whole suite in parallel under ThreadSanitizer.
@Suite("ManualClock", .timeLimit(.minutes(5)))
struct ManualClockTests {
  enum Action: Sendable, Equatable {
    /// Sleeps `seconds`, then records `name` with the clock's time.
    case sleep(String, seconds: Int)
    /// Ticks `times`, one second apart, in one effect.
    case timer(times: Int)
    case tick
    /// Sleeps 1 s, then 2 s more.
    case twoNaps
    /// Waits at `gate`, then sleeps `seconds` and records `name`.
    case sleepAfterGate(String, seconds: Int)
  }

  struct Log: Sendable, Equatable {
    var ticks = 0
  }

  static func makeCore(clock: ManualClock, woke: Recorded<String>, gate: Gate = Gate()) -> Core<Log, Action> {
    Core(initialState: Log(), clock: clock) { log, action in
      switch action {
      case .sleep(let name, let seconds):
        return .run { send in
          try await send.clock.sleep(for: .seconds(seconds))
          woke.append("\(name)@\(clock.now)")
        }
      case .timer(let times):
        return .run { send in
          for _ in 0..<times {
            try await send.clock.sleep(for: .seconds(1))
            await send(.tick)
          }
        }
      case .tick:
        log.ticks += 1
        return .none
      case .sleepAfterGate(let name, let seconds):
        return .run { send in
          await gate.wait()
          try await send.clock.sleep(for: .seconds(seconds))
          woke.append("\(name)@\(clock.now)")
        }
      case .twoNaps:
        return .run { send in
          try await send.clock.sleep(for: .seconds(1))
          woke.append("first nap")
          try await send.clock.sleep(for: .seconds(2))
          woke.append("second nap")
        }
      }
    }
  }

  @Test(
    "sleepers wake in deadline order, equal deadlines in the order they slept, each having run when advance returns")
  func deadlineOrder() async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let core = Self.makeCore(clock: clock, woke: woke)
    // One at a time, so the order they slept is known.
    for (count, (name, seconds)) in [("a", 3), ("b", 1), ("c", 2), ("d", 1)].enumerated() {
      try await core.dispatch(.sleep(name, seconds: seconds))
      try await clock.waitForSleepers(atLeast: count + 1)
    }
    await clock.advance(by: .seconds(3))
    #expect(woke.all == ["b@1.0 seconds", "d@1.0 seconds", "c@2.0 seconds", "a@3.0 seconds"])
    #expect(clock.now == .zero.advanced(by: .seconds(3)))
    #expect(clock.sleeperCount == 0)
    await core.shutdown()
  }

  @Test("sleeps that begin at the same instant wake in the order their effects were started, not the order they slept")
  func sameInstantInStartOrder() async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let gate = Gate()
    let core = Self.makeCore(clock: clock, woke: woke, gate: gate)
    try await core.dispatch(.sleepAfterGate("first started", seconds: 1))
    try await core.dispatch(.sleep("second started", seconds: 1))
    try await clock.waitForSleepers(atLeast: 1)  // the second is asleep; the first waits at the gate
    gate.open()
    try await clock.waitForSleepers(atLeast: 2)  // the first sleeps too, later in real time, at the same instant
    await clock.advance(by: .seconds(1))
    #expect(woke.all == ["first started@1.0 seconds", "second started@1.0 seconds"])
    await core.shutdown()
  }

  @Test("equal deadlines: a sleep begun at an earlier time of the clock wakes first, whichever effect started first")
  func earlierSleepFirst() async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let core = Self.makeCore(clock: clock, woke: woke)
    try await core.dispatch(.twoNaps)  // started first: sleeps at 0 s until 1 s, then at 1 s until 3 s
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.sleep("later started", seconds: 3))  // sleeps at 0 s until 3 s
    try await clock.waitForSleepers(atLeast: 2)
    await clock.advance(by: .seconds(3))
    #expect(woke.all == ["first nap", "later started@3.0 seconds", "second nap"])
    await core.shutdown()
  }

  @Test("sleeps that begin at the same instant in effects of two cores wake in the order the effects were started")
  func sameInstantAcrossCores() async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let gate = Gate()
    let madeFirst = Self.makeCore(clock: clock, woke: woke)
    let madeSecond = Self.makeCore(clock: clock, woke: woke, gate: gate)
    try await madeSecond.dispatch(.sleepAfterGate("first started", seconds: 1))
    try await madeFirst.dispatch(.sleep("second started", seconds: 1))
    try await clock.waitForSleepers(atLeast: 1)  // the second is asleep; the first waits at the gate
    gate.open()
    try await clock.waitForSleepers(atLeast: 2)
    await clock.advance(by: .seconds(1))
    #expect(woke.all == ["first started@1.0 seconds", "second started@1.0 seconds"])
    await madeFirst.shutdown()
    await madeSecond.shutdown()
  }

  @Test("a task outside any effect counts as started when it calls sleep, between the effects started before and after")
  func plainTaskInStartOrder() async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let gate = Gate()
    let core = Self.makeCore(clock: clock, woke: woke, gate: gate)
    try await core.dispatch(.sleepAfterGate("effect started first", seconds: 1))
    let plain = Task {
      try await clock.sleep(for: .seconds(1))
      woke.append("task")
    }
    try await clock.waitForSleepers(atLeast: 1)  // the task is asleep; the effect waits at the gate
    gate.open()
    try await clock.waitForSleepers(atLeast: 2)
    await clock.advance(by: .seconds(1))
    try await plain.value
    #expect(woke.all == ["effect started first@1.0 seconds", "task"])
    await core.shutdown()
  }

  @Test("an advance returns once a woken effect has ended, with the core counting it no more")
  func advanceWaitsForTheEffectsEnd() async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let core = Self.makeCore(clock: clock, woke: woke)
    for round in 1...20 {
      try await core.dispatch(.sleep("\(round)", seconds: 1))
      try await clock.waitForSleepers(atLeast: 1)
      await clock.advance(by: .seconds(1))
      #expect(woke.all.count == round)
      #expect(core.metrics.effectsInFlight == 0)
    }
  }

  @Test("ManualClock is AsyncCoreTesting's: a program that links AsyncCore alone has none")
  func declaredByTheTestingLibrary() {
    #expect(String(reflecting: ManualClock.self) == "AsyncCoreTesting.ManualClock")
  }

  @Test("a sleeper never wakes before its deadline")
  func neverEarly() async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let core = Self.makeCore(clock: clock, woke: woke)
    try await core.dispatch(.sleep("a", seconds: 1))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .milliseconds(999))
    #expect(woke.all.isEmpty)
    #expect(clock.sleeperCount == 1)
    await clock.advance(by: .milliseconds(1))
    #expect(woke.all == ["a@1.0 seconds"])
    await core.shutdown()
  }

  @Test("a timer looping in one effect ticks once per period an advance passes, with no yield loop")
  func loopingTimer() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock, woke: Recorded())
    try await core.dispatch(.timer(times: 10))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .milliseconds(5_500))
    #expect(await core.state.ticks == 5)
    #expect(clock.sleeperCount == 1)  // asleep for the sixth
    await clock.advance(by: .seconds(60))
    #expect(await core.state.ticks == 10)
    #expect(clock.sleeperCount == 0)
    #expect(core.metrics.effectsInFlight == 0)
  }

  @Test("run() wakes every sleeper, those that sleep again while it runs included, and ends at the last deadline")
  func runToTheEnd() async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let core = Self.makeCore(clock: clock, woke: woke)
    try await core.dispatch(.twoNaps)
    try await core.dispatch(.sleep("late", seconds: 2))
    try await clock.waitForSleepers(atLeast: 2)
    await clock.run()
    #expect(woke.all == ["first nap", "late@2.0 seconds", "second nap"])
    #expect(clock.now == .zero.advanced(by: .seconds(3)))
    #expect(clock.sleeperCount == 0)
    await clock.run()  // nobody asleep: returns at once, time stays
    #expect(clock.now == .zero.advanced(by: .seconds(3)))
    await core.shutdown()
  }

  @Test("a task outside any effect wakes at its deadline and returns from sleep")
  func plainTask() async throws {
    let clock = ManualClock()
    let sleeper = Task { try await clock.sleep(for: .seconds(2)) }
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    #expect(clock.sleeperCount == 1)
    await clock.advance(by: .seconds(1))
    try await sleeper.value
    #expect(clock.sleeperCount == 0)
  }

  @Test("a sleep until a deadline already reached returns at once and never counts as asleep")
  func pastDeadline() async throws {
    let clock = ManualClock()
    await clock.advance(by: .seconds(5))
    try await clock.sleep(until: .zero.advanced(by: .seconds(5)))
    try await clock.sleep(for: .zero)
    #expect(clock.sleeperCount == 0)
    #expect(clock.now == .zero.advanced(by: .seconds(5)))
  }

  @Test("cancelling a sleeping task wakes it at once with CancellationError and removes it")
  func cancellingASleeper() async throws {
    let clock = ManualClock()
    let sleeper = Task { try await clock.sleep(for: .seconds(3_600)) }
    try await clock.waitForSleepers(atLeast: 1)
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(clock.sleeperCount == 0)
    #expect(clock.now == .zero)  // no time had to pass
  }

  @Test("a task cancelled before it sleeps throws at once")
  func cancelledBeforeSleeping() async {
    let clock = ManualClock()
    let sleeper = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(for: .seconds(1))
    }
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(clock.sleeperCount == 0)
  }

  @Test("waitForSleepers(atLeast:) returns once enough sleep, and throws when its task is cancelled first")
  func waitingForSleepers() async throws {
    let clock = ManualClock()
    try await clock.waitForSleepers(atLeast: 0)  // enough already
    let waiter = Task { try await clock.waitForSleepers(atLeast: 2) }
    let sleepers = (0..<2).map { _ in Task { try await clock.sleep(for: .seconds(1)) } }
    try await waiter.value
    #expect(clock.sleeperCount == 2)
    await clock.advance(by: .seconds(1))
    for sleeper in sleepers { try await sleeper.value }

    let abandoned = Task { try await clock.waitForSleepers(atLeast: 1) }
    abandoned.cancel()
    await #expect(throws: CancellationError.self) { try await abandoned.value }
  }

  @Test("a cancelled advance stops following a woken effect, wakes what is due and moves time to its target")
  func cancelledAdvance() async throws {
    let clock = ManualClock()
    let gate = Gate()
    let core = Core<Int, Int>(initialState: 0, clock: clock) { _, _ in
      .run { send in
        try await send.clock.sleep(for: .seconds(1))
        await gate.wait()  // something the clock cannot see: the advance keeps following
      }
    }
    try await core.dispatch(1)
    try await clock.waitForSleepers(atLeast: 1)
    let advancing = Task { await clock.advance(by: .seconds(5)) }
    await gate.waitForWaiters(1)  // woken, and waiting on the gate
    advancing.cancel()
    await advancing.value
    #expect(clock.now == .zero.advanced(by: .seconds(5)))
    gate.open()
    try await core.waitUntilIdle()
  }

  @Test("an advance following an effect that is cancelled while it runs returns once the effect has ended")
  func followedEffectCancelled() async throws {
    struct Work: Hashable, Sendable {}
    let clock = ManualClock()
    let gate = Gate()
    let core = Core<Int, Int>(initialState: 0, clock: clock) { _, action in
      guard action > 0 else { return .cancel(id: Work()) }
      return .run { send in
        try await send.clock.sleep(for: .seconds(1))
        await gate.wait()  // ignores cancellation
      }
      .cancellable(id: Work())
    }
    try await core.dispatch(1)
    try await clock.waitForSleepers(atLeast: 1)
    let advancing = Task { await clock.advance(by: .seconds(1)) }
    await gate.waitForWaiters(1)  // woken, and followed
    try await core.dispatch(0)
    gate.open()
    await advancing.value
    #expect(core.metrics.effectsInFlight == 0)
    #expect(clock.now == .zero.advanced(by: .seconds(1)))
  }

  @Test("advancing races shutdown(.immediate): both return and no sleeper is left", arguments: 0..<20)
  func advanceRacesShutdown(round: Int) async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock, woke: Recorded())
    try await core.dispatch(.timer(times: 100))
    try await clock.waitForSleepers(atLeast: 1)
    async let advanced: Void = clock.advance(by: .seconds(50))
    async let stopped: Void = core.shutdown(.immediate)
    _ = await (advanced, stopped)
    #expect(clock.sleeperCount == 0)
    #expect(core.metrics.effectsInFlight == 0)
    #expect(clock.now == .zero.advanced(by: .seconds(50)))
  }

  @Test(
    "advances from several tasks at once take turns: they add up, and sleepers wake in deadline order",
    arguments: 0..<10)
  func concurrentAdvances(round: Int) async throws {
    let clock = ManualClock()
    let woke = Recorded<String>()
    let core = Self.makeCore(clock: clock, woke: woke)
    for seconds in 1...40 { try await core.dispatch(.sleep("\(seconds)", seconds: seconds)) }
    try await clock.waitForSleepers(atLeast: 40)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask { for _ in 0..<10 { await clock.advance(by: .seconds(1)) } }
      }
    }
    #expect(woke.all == (1...40).map { "\($0)@\(Double($0)) seconds" })
    #expect(clock.now == .zero.advanced(by: .seconds(40)))
    #expect(clock.sleeperCount == 0)
    await core.shutdown()
  }

  @Test("advance(by:) with a negative duration stops the program with a message")
  func negativeAdvance() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      await ManualClock().advance(by: .seconds(-1))
    }
    let standardError = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
    #expect(
      standardError.contains("AsyncCoreTesting: ManualClock.advance(by:) was given a negative duration"),
      "standard error: \(standardError)")
  }
}
