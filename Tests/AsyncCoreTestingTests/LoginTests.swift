import AsyncCore
import AsyncCoreTestSupport
import AsyncCoreTesting
import Testing

/// The Core seed's one-time-password login, tested with a test core: the
/// 60-second window and the network on a manual clock.
@Suite("One-time-password login", .timeLimit(.minutes(5)))
struct LoginTests {
  let clock = ManualClock()

  func makeStore(
    verifier: CodeVerifier? = nil,
    exhaustivity: Exhaustivity = .on
  ) -> TestCore<Login, LoginAction> {
    TestCore(
      initialState: Login(),
      dependencies: Dependencies { $0.codeVerifier = verifier ?? .server(on: clock, latency: .milliseconds(300)) },
      clock: clock,
      exhaustivity: exhaustivity,
      timeout: Fixture.timeout,
      reducer: LoginFeature().reduce
    )
  }

  /// Requests a code: the countdown starts at 60 seconds.
  func requestCode(_ store: TestCore<Login, LoginAction>, attempt: Int = 1) async {
    await store.send(.codeRequested) {
      $0.screen = .enterCode
      $0.secondsLeft = 60
      $0.attempt = attempt
    }
  }

  /// Lets `seconds` pass, one at a time, receiving each tick; `sleepers` are
  /// the tasks asleep on the clock (the countdown, and a verification).
  func pass(
    seconds: Int, on store: TestCore<Login, LoginAction>, attempt: Int = 1, sleepers: Int = 1
  ) async {
    for _ in 0..<seconds {
      await clock.waitForSleepers(sleepers)
      await clock.advance(by: .seconds(1))
      await store.receive(.tick(attempt: attempt)) { $0.secondsLeft -= 1 }
    }
  }

  /// The last second: the code expires and the screen goes back.
  func expire(_ store: TestCore<Login, LoginAction>, attempt: Int = 1, sleepers: Int = 1) async {
    await clock.waitForSleepers(sleepers)
    await clock.advance(by: .seconds(1))
    await store.receive(.tick(attempt: attempt)) {
      $0.secondsLeft = 0
      $0.screen = .enterPhone
      $0.isVerifying = false
      $0.alert = LoginFeature.expired
    }
  }

  @Test("the user has 60 seconds to enter the code, then the screen goes back")
  func codeExpires() async {
    let store = makeStore()
    await requestCode(store)
    await pass(seconds: 59, on: store)
    await expire(store)
    await store.finish()
  }

  @Test("the right code is verified over the network, with a loading flag, and goes home")
  func rightCodeGoesHome() async {
    let store = makeStore()
    await requestCode(store)
    await pass(seconds: 10, on: store)
    await store.send(.codeEntered(LoginFeature.validCode)) { $0.isVerifying = true }
    await clock.waitForSleepers(2)  // the countdown and the verification
    await clock.advance(by: .milliseconds(300))
    await store.receive(.verified(attempt: 1, isValid: true)) {
      $0.isVerifying = false
      $0.screen = .home
    }
    // Going home cancelled the countdown: nothing is left running.
    await store.finish()
  }

  @Test("a wrong code shows an alert; dismissed, the user tries again and goes home")
  func wrongCodeAlert() async {
    let store = makeStore()
    await requestCode(store)
    await store.send(.codeEntered("000000")) { $0.isVerifying = true }
    await clock.waitForSleepers(2)
    await clock.advance(by: .milliseconds(300))
    await store.receive(.verified(attempt: 1, isValid: false)) {
      $0.isVerifying = false
      $0.alert = LoginFeature.wrongCode
    }
    await store.send(.alertDismissed) { $0.alert = nil }
    await store.send(.codeEntered(LoginFeature.validCode)) { $0.isVerifying = true }
    await clock.waitForSleepers(2)
    await clock.advance(by: .milliseconds(300))
    await store.receive(.verified(attempt: 1, isValid: true)) {
      $0.isVerifying = false
      $0.screen = .home
    }
    await store.finish()
  }

  @Test("an unreachable server shows an alert, and the countdown goes on")
  func unreachableServer() async {
    let store = makeStore(verifier: .unreachable(on: clock, latency: .milliseconds(300)))
    await requestCode(store)
    await store.send(.codeEntered(LoginFeature.validCode)) { $0.isVerifying = true }
    await clock.waitForSleepers(2)
    await clock.advance(by: .milliseconds(300))
    await store.receive(.verificationFailed(attempt: 1)) {
      $0.isVerifying = false
      $0.alert = LoginFeature.unreachable
    }
    await store.skipInFlightEffects()  // the countdown
    await store.finish()
  }

  @Test("a response that arrives after the code expired is ignored")
  func lateResponseIgnored() async {
    let store = makeStore(verifier: .server(on: clock, latency: .milliseconds(1_500)))
    await requestCode(store)
    await pass(seconds: 59, on: store)
    await store.send(.codeEntered(LoginFeature.validCode)) { $0.isVerifying = true }
    await expire(store, sleepers: 2)  // at 60 s; the response is due at 60.5 s
    await clock.waitForSleepers(1)
    await clock.advance(by: .milliseconds(500))
    await store.receive(.verified(attempt: 1, isValid: true))  // no closure: the state does not change
    await store.finish()
  }

  @Test("requesting a new code restarts the 60 seconds; the old countdown stops")
  func newCodeRestartsCountdown() async {
    let store = makeStore()
    await requestCode(store)
    await pass(seconds: 50, on: store)
    await requestCode(store, attempt: 2)
    await pass(seconds: 59, on: store, attempt: 2)
    await expire(store, attempt: 2)
    await store.finish()
  }

  @Test("non-exhaustive: an integration test names only where the user ends up")
  func integration() async {
    let store = makeStore(exhaustivity: .off)
    await store.send(.codeRequested)
    await clock.waitForSleepers(1)
    await store.send(.codeEntered(LoginFeature.validCode)) { $0.isVerifying = true }
    await clock.waitForSleepers(2)
    await clock.advance(by: .seconds(1))
    await store.receive(.verified(attempt: 1, isValid: true)) { $0.screen = .home }
    await store.finish()
  }
}
