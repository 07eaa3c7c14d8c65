// Random action sequences on the examples' reducers, each run on a core
// that records it, then replayed: into a fresh core with `Core.replay`, whose
// final state and action log (`actions(buffering: .all)`, every action with
// the states before and after it) must equal the original run's, and into a
// `TestCore` with `replay(_:)`, which must record no issue.
//
// The sequences are what a user of each example does: Login's and
// PropertySearch's are lines typed at their prompts, turned into actions by
// the examples' own input parsers, so their effects run and their follow-ups
// are in the recording. The fake network answers at once (its latency is on
// a clock whose sleeps end at once); Login's countdown runs on a ManualClock
// that the sequence moves. After each step the test waits on the core's own
// signals for the step's effects: `EffectHandle.finish()`, a loading flag
// going down, the countdown asleep again.
//
// A failure names the sequence's seed. Run one sequence again with
// `ASYNCCORE_REPLAY_SEED=<seed> swift test --disable-xctest --filter ReplayPropertyTests`;
// the number of sequences, 200 per reducer, scales with ASYNCCORE_STRESS_SCALE
// (by default 1, and 0.25 under a sanitizer).

import AsyncCore
import AsyncCoreCounterExample
import AsyncCoreLoginExample
import AsyncCoreProcessTestSupport
import AsyncCorePropertySearchExample
import AsyncCoreTesting
import Testing

@Suite("Replaying a recording of an example's run reproduces it", .hangDetector)
struct ReplayPropertyTests {
  static let firstSeed: UInt64 = 0x5245_504C_4159  // "REPLAY"

  /// The seeds to run: the one in ASYNCCORE_REPLAY_SEED, or 200 × the
  /// stress scale from `firstSeed` on; `nil` if a variable is malformed.
  static var seeds: [UInt64]? {
    if let text = Environment.string("ASYNCCORE_REPLAY_SEED") {
      return UInt64(text).map { [$0] }
    }
    let scale: Double
    if let text = Environment.string("ASYNCCORE_STRESS_SCALE") {
      guard let value = Double(text), value > 0 else { return nil }
      scale = value
    } else {
      scale = Environment.sanitizer == nil ? 1 : 0.25
    }
    let count = max(1, Int(200 * scale))
    return (0..<UInt64(count)).map { firstSeed &+ $0 }
  }

  // MARK: - Counter

  @Test("Counter: a recorded random sequence replays to the same state and action log")
  func counter() async throws {
    var seen: Set<String> = []
    for seed in try Self.requireSeeds() {
      var random = SplitMix64(seed: seed)
      let core = Core(initialState: Counter(), reducer: Reduce(Counter.reduce))
      let recording = try await Self.checkReplay(of: core, reducer: Reduce(Counter.reduce), seed: seed) {
        for _ in 0..<Int.random(in: 1...40, using: &random) {
          let action: CounterAction =
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4: .increment
            case 4..<7: .decrement
            case 7..<9: .setStep(Int.random(in: -5...5, using: &random))
            default: .reset
            }
          try await core.dispatch(action)
        }
      }
      seen.formUnion(recording.actions.map(ExampleCodableTests.caseName))
    }
    Self.expectEveryCase(seen, of: ExampleCodableTests.counterActions.map(ExampleCodableTests.caseName))
  }

  // MARK: - Login

  /// What is typed on each screen: right and wrong numbers and codes, and
  /// the screen's commands.
  static let phoneLines = ["555 0100", "+44 20 7946 0958", "12", "555-abc", ""]
  static let codeLines = ["424242", "424242", "111111", "12 34", "resend", "back"]

  @Test("Login: a recorded random session, countdown and requests included, replays to the same state and action log")
  func login() async throws {
    var seen: Set<String> = []
    for seed in try Self.requireSeeds() {
      var random = SplitMix64(seed: seed)
      let clock = ManualClock()
      let server = AbroadRefusingServer(
        server: FakeOTPServer(latency: .seconds(1), clock: ImmediateClock(), codes: { _ in "424242" }))
      let core = Core(
        initialState: Login(), dependencies: Dependencies { $0.otpServer = server }, clock: clock,
        reducer: Login.reducer)
      let recording = try await Self.checkReplay(of: core, reducer: Login.reducer, seed: seed) {
        for _ in 0..<Int.random(in: 1...40, using: &random) {
          let state = await core.state
          if random.chance(20) {
            // Time passes: the countdown, asleep if it runs, ticks; its
            // ticks are queued until the state is read.
            await clock.advance(by: .seconds(Int.random(in: 1...70, using: &random)))
            _ = await core.state
            continue
          }
          let action: LoginAction
          if random.chance(10) {
            action = .navigation(.popToRoot)  // signing out: the only way back from home
          } else {
            let lines = state.stack.top == nil ? Self.phoneLines : Self.codeLines
            guard case .send(let typed) = LoginInput(lines.randomElement(using: &random)!, on: state) else { continue }
            action = typed
          }
          try await core.dispatch(action)
          // The request's answer, then the countdown asleep if it runs.
          for await isLoading in await core.observe(\.isLoading) where !isLoading { break }
          if let entry = await core.state.codeEntry, entry.secondsLeft > 0 {
            try await clock.waitForSleepers(atLeast: 1)
          }
        }
      }
      seen.formUnion(recording.actions.map(ExampleCodableTests.caseName))
    }
    // Routes are pushed and replaced by the coordinator, not by an action.
    let unreachable: Set = ["navigation.push", "navigation.replace", "navigation.set"]
    Self.expectEveryCase(
      seen, of: ExampleCodableTests.loginActions.map(ExampleCodableTests.caseName).filter { !unreachable.contains($0) })
  }

  // MARK: - PropertySearch

  /// What is typed: places known and unknown, row numbers (a place off the
  /// results screen), back, and links that open something and that do not.
  static let searchLines = [
    "Leeds", "London", "Bath", "Atlantis", "1", "2", "3", "4", "back", "asynccore://property/42",
    "asynccore://property/9", "asynccore://search?place=Bath", "asynccore://search/property/43?place=Leeds",
    "asynccore://property/abc", "https://example.com",
  ]

  @Test(
    "PropertySearch: a recorded random session, requests and links included, replays to the same state and action log")
  func propertySearch() async throws {
    var seen: Set<String> = []
    for seed in try Self.requireSeeds() {
      var random = SplitMix64(seed: seed)
      let api = FakePropertyAPI(latency: .seconds(1), clock: ImmediateClock(), isOffline: random.chance(20))
      let core = Core(
        initialState: PropertySearch(), dependencies: Dependencies { $0.propertyAPI = api },
        reducer: PropertySearch.reducer)
      let recording = try await Self.checkReplay(of: core, reducer: PropertySearch.reducer, seed: seed) {
        for _ in 0..<Int.random(in: 1...40, using: &random) {
          let line = Self.searchLines.randomElement(using: &random)!
          guard case .send(let action) = PropertySearchInput(line, on: await core.state) else { continue }
          try await core.dispatch(action).finish()  // the search or the load, answered
        }
      }
      seen.formUnion(recording.actions.map(ExampleCodableTests.caseName))
    }
    // Links and searches set the stack; only back is a navigation action.
    let unreachable: Set = ["navigation.push", "navigation.popToRoot", "navigation.replace", "navigation.set"]
    Self.expectEveryCase(
      seen,
      of: ExampleCodableTests.propertySearchActions.map(ExampleCodableTests.caseName).filter {
        !unreachable.contains($0)
      }
    )
  }

  // MARK: - The check

  /// The sequences reached every case a user's session can: a generator
  /// that never reaches one checks nothing about it. Only with the default
  /// 200 seeds or more: fewer (one seed, or a sanitizer's quarter of them,
  /// the first of the same seeds) reach a part, and the plain run checks
  /// the whole (a ThreadSanitizer run's 50 Login sessions never resent a
  /// code).
  static func expectEveryCase(
    _ seen: Set<String>, of cases: [String], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard Environment.string("ASYNCCORE_REPLAY_SEED") == nil, (seeds?.count ?? 0) >= 200 else { return }
    let missing = Set(cases).subtracting(seen).sorted()
    #expect(missing.isEmpty, "no sequence reached \(missing)", sourceLocation: sourceLocation)
  }

  static func requireSeeds() throws -> [UInt64] {
    try #require(
      seeds, "ASYNCCORE_REPLAY_SEED must be an unsigned integer, ASYNCCORE_STRESS_SCALE a positive number")
  }

  /// Runs `run` on `core` with a recorder, then replays the recording into
  /// a fresh core and a test core, and compares.
  static func checkReplay<State: Sendable & Equatable, Action: Sendable & Equatable>(
    of core: Core<State, Action>, reducer: Reduce<State, Action>, seed: UInt64,
    sourceLocation: SourceLocation = #_sourceLocation, _ run: () async throws -> Void
  ) async throws -> Recording<State, Action> {
    let context = Comment(
      rawValue: "seed \(seed) (ASYNCCORE_REPLAY_SEED=\(seed) swift test --disable-xctest --filter ReplayPropertyTests)")
    let initialState = await core.state
    let log = await core.actions(buffering: .all)
    let recorder = await core.record(last: 100_000)
    // A recorder that keeps only the newest actions: its recording starts
    // from a later state.
    let newest = await core.record(last: 8)
    try await run()
    let recording = await recorder.recording()
    let newestRecording = await newest.recording()
    let finalState = await core.state
    await core.shutdown(.immediate)
    let original = await collect(log)

    #expect(recording.initialState == initialState, context, sourceLocation: sourceLocation)
    #expect(recording.finalState == finalState, context, sourceLocation: sourceLocation)
    #expect(recording.actions == original.map(\.action), context, sourceLocation: sourceLocation)

    // Into a fresh core: the same states, action by action.
    let replayed = try await replay(recording, reducer: reducer)
    #expect(replayed.state == finalState, context, sourceLocation: sourceLocation)
    #expect(replayed.log == original, context, sourceLocation: sourceLocation)

    // The newest actions alone, from the state before them.
    #expect(newestRecording.actions == original.suffix(8).map(\.action), context, sourceLocation: sourceLocation)
    #expect(
      newestRecording.initialState == (original.dropLast(8).last?.stateAfter ?? initialState), context,
      sourceLocation: sourceLocation)
    let replayedNewest = try await replay(newestRecording, reducer: reducer)
    #expect(replayedNewest.state == finalState, context, sourceLocation: sourceLocation)

    // Into a test core: an issue if the replay did not reproduce finalState.
    let store = TestCore(initialState: recording.initialState, reducer: reducer)
    await store.replay(recording, sourceLocation: sourceLocation)
    #expect(store.state == finalState, context, sourceLocation: sourceLocation)
    return recording
  }

  /// The state a fresh core ends in after replaying `recording`, and its
  /// action log.
  static func replay<State: Sendable & Equatable, Action: Sendable & Equatable>(
    _ recording: Recording<State, Action>, reducer: Reduce<State, Action>
  ) async throws -> (state: State, log: [ActionRecord<State, Action>]) {
    let core = Core(initialState: recording.initialState, reducer: reducer)
    let log = await core.actions(buffering: .all)
    try await core.replay(recording)
    let state = await core.state
    await core.shutdown()
    return (state, await collect(log))
  }

  static func collect<Element>(_ stream: CoreStream<Element>) async -> [Element] {
    var elements: [Element] = []
    for await element in stream { elements.append(element) }
    return elements
  }
}

/// A clock whose sleeps end at once (unless the sleeping task is
/// cancelled): the fake network's latency, so that a request is answered as
/// soon as it is made.
struct ImmediateClock: Clock {
  var now: ContinuousClock.Instant { .now }
  var minimumResolution: Duration { .zero }

  func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
    try Task.checkCancellation()
  }
}

/// The fake OTP server, except that it cannot send a code to a number
/// abroad (`+…`): the phone screen's failure.
struct AbroadRefusingServer: OTPServer {
  struct Refused: Error {}

  let server: FakeOTPServer

  func sendCode(to phone: String) async throws {
    if phone.hasPrefix("+") { throw Refused() }
    try await server.sendCode(to: phone)
  }

  func verify(_ code: String, for phone: String) async throws -> Bool {
    try await server.verify(code, for: phone)
  }
}
