import AsyncCore
import AsyncCoreTesting
import Testing

/// The handle `send` returns: one send's effects, ended or awaited alone.
@Suite("TestEffectHandle", .timeLimit(.minutes(5)))
struct TestEffectHandleTests {
  let fixture = Fixture()

  /// `send(.x) at TestEffectHandleTests.swift:line`, as messages name a send.
  func origin(_ step: String, line: Int) -> String {
    "\(step) at TestEffectHandleTests.swift:\(line)"
  }

  @Test("cancelling one send's handle ends its effects alone: another timer goes on ticking")
  func cancelOneSend() async {
    let store = fixture.makeStore()
    let first = await store.send(.startTimer)
    await fixture.clock.waitForSleepers(1)
    let second = await store.send(.startTimer)
    await fixture.clock.waitForSleepers(2)
    await first.cancel()
    #expect(first.isFinished)
    #expect(!second.isFinished)
    #expect(fixture.clock.sleeperCount == 1)
    await fixture.clock.advance(by: .seconds(1))
    await store.receive(.tick) { $0.count = 1 }  // one tick: the first timer no longer runs
    await second.cancel()
    await store.finish()
  }

  @Test("a send's handle finishes once its effects have ended; then what they sent is there to receive")
  func finishOneSend() async {
    let store = fixture.makeStore()
    let load = await store.send(.load) { $0.isLoading = true }
    await load.finish()
    #expect(load.isFinished)
    await store.receive(.loaded(42), timeout: .zero) {
      $0.isLoading = false
      $0.count = 42
    }
    await store.send(.increment) { $0.count = 43 }.finish()  // no effect: nothing to wait for
    await store.finish()
  }

  @Test("a send's handle records effects still running after its finish timeout at the call; they go on running")
  func handleFinishTimesOut() async {
    let store = fixture.makeStore()
    let sendLine = #line + 1
    let timer = await store.send(.startTimer)
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .effectsNotFinished(origin: origin("send(.startTimer)", line: sendLine), waited: .milliseconds(20)),
        line: line)
    ]) {
      line = #line + 1
      await timer.finish(timeout: .milliseconds(20))
    }
    #expect(!timer.isFinished)
    await timer.cancel()
    await store.finish()
  }

  @Test("a send's handle records an effect that ignores its cancellation at the cancel")
  func handleCancelIgnored() async {
    let store = fixture.makeStore()
    let sendLine = #line + 1
    let wait = await store.send(.wait)
    await fixture.gate.waitForWaiters(1)
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .effectIgnoredCancellation(origin: origin("send(.wait)", line: sendLine), waited: .milliseconds(20)),
        line: line)
    ]) {
      line = #line + 1
      await wait.cancel(timeout: .milliseconds(20))
    }
    fixture.gate.open()
    await wait.finish()
    await store.finish()
  }
}
