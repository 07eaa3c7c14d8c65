import AsyncCore
import AsyncCoreTestSupport
import AsyncCoreTesting
import Testing

/// The seeds' one-time-password login, its 60-second window tested in
/// milliseconds by driving the core's injected clock. The code is checked by
/// a verifier that answers at once, so only the countdown sleeps on the clock.
@Suite("One-time-password screen", .hangDetector)
struct OneTimePasswordTests {
  let clock = ManualClock()

  func makeCore() -> Core<Login, LoginAction> {
    Core(
      initialState: Login(),
      dependencies: Dependencies { $0.codeVerifier = CodeVerifier { $0 == LoginFeature.validCode } },
      clock: clock,
      reducer: LoginFeature().reduce)
  }

  /// Lets `seconds` pass, one at a time. Each second's tick is sent by the
  /// time the countdown sleeps again (`waitForSleepers`), so the ticks of
  /// all but the last second are queued before this returns.
  func pass(seconds: Int, on core: Core<Login, LoginAction>) async throws {
    for _ in 0..<seconds {
      try await clock.waitForSleepers(atLeast: 1)
      await clock.advance(by: .seconds(1))
    }
  }

  @Test("the user has 60 seconds to enter the code, then the screen goes back")
  func codeExpires() async throws {
    let core = makeCore()
    let countdown = try await core.dispatch(.codeRequested)
    try await pass(seconds: 59, on: core)
    try await clock.waitForSleepers(atLeast: 1)  // the 59th tick is sent; the last second has begun
    var state = await core.state
    #expect(state.screen == .enterCode)
    #expect(state.secondsLeft == 1)

    try await pass(seconds: 1, on: core)
    try await countdown.finish()
    state = await core.state
    #expect(state.screen == .enterPhone)
    #expect(state.secondsLeft == 0)
    #expect(state.alert == "The code expired. Request a new one.")
  }

  @Test("the right code within the window signs in and stops the countdown")
  func codeEnteredInTime() async throws {
    let core = makeCore()
    let countdown = try await core.dispatch(.codeRequested)
    try await pass(seconds: 30, on: core)
    try await clock.waitForSleepers(atLeast: 1)  // the 30th tick is sent, so reduced before what follows
    try await core.dispatch(.codeEntered("000000")).finish()  // the verification's answer is reduced
    #expect(await core.state.alert == "That code is not right.")
    try await core.dispatch(.codeEntered(LoginFeature.validCode)).finish()
    try await countdown.finish()  // ends because the countdown was cancelled
    #expect(clock.sleeperCount == 0)
    await clock.advance(by: .seconds(60))
    let state = await core.state
    #expect(state.screen == .home)
    #expect(state.secondsLeft == 30)
  }

  @Test("requesting a new code restarts the 60 seconds")
  func newCodeRestartsCountdown() async throws {
    let core = makeCore()
    try await core.dispatch(.codeRequested)
    try await pass(seconds: 50, on: core)
    let second = try await core.dispatch(.codeRequested)
    try await pass(seconds: 59, on: core)
    try await clock.waitForSleepers(atLeast: 1)
    #expect(await core.state.screen == .enterCode)
    try await pass(seconds: 1, on: core)
    try await second.finish()
    #expect(await core.state.screen == .enterPhone)
  }
}
