import AsyncCore
import Testing

@testable import AsyncCoreTesting

/// Each failure a test core records really fails the test, with its
/// documented message, at the line it belongs to.
@Suite("TestCore failures", .timeLimit(.minutes(5)))
struct TestCoreFailureTests {
  let fixture = Fixture()

  /// `send(.x) at TestCoreFailureTests.swift:line`, as messages name a send.
  func origin(_ step: String, line: Int) -> String {
    "\(step) at TestCoreFailureTests.swift:\(line)"
  }

  // MARK: - send

  @Test("a send whose state differs from the expected one fails at the send, field by field")
  func sendStateMismatch() async {
    let store = fixture.makeStore()
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .stateMismatch(
          step: "send(.increment)", differences: [StateDifference(path: "count", expected: "2", actual: "1")]),
        line: line)
    ]) {
      line = #line + 1
      await store.send(.increment) { $0.count = 2 }
    }
    #expect(store.state.count == 1)
  }

  @Test("a nested field is named by its path")
  func nestedField() async {
    let store = fixture.makeStore()
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .stateMismatch(
          step: "send(.setName(\"Ada\"))",
          differences: [StateDifference(path: "form.name", expected: "\"Bob\"", actual: "\"Ada\"")]
        ),
        line: line)
    ]) {
      line = #line + 1
      await store.send(.setName("Ada")) { $0.form.name = "Bob" }
    }
  }

  @Test("a send without a closure expects no change")
  func unexpectedChange() async {
    let store = fixture.makeStore()
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .stateMismatch(
          step: "send(.increment)", differences: [StateDifference(path: "count", expected: "0", actual: "1")]),
        line: line)
    ]) {
      line = #line + 1
      await store.send(.increment)
    }
  }

  @Test("states that differ only by their own == are shown whole")
  func wholeValue() async {
    let first = Token()
    let store = TestCore<Holder, Token>(
      initialState: Holder(token: first),
      reducer: Reduce { state, token in
        state.token = token
      })
    let second = Token()
    var line = 0
    let text = "Holder(token: Token())"
    await expectIssues([
      ExpectedIssue(
        .stateMismatch(
          step: "send(Token())",
          differences: [StateDifference(path: "", expected: text, actual: text)]),
        line: line)
    ]) {
      line = #line + 1
      await store.send(second)
    }
  }

  @Test("a closure that throws fails the send")
  func updateThrows() async {
    let store = fixture.makeStore()
    var line = 0
    await expectIssues([
      ExpectedIssue(.updateThrew(step: "send(.increment)", error: "Boom()"), line: line)
    ]) {
      line = #line + 1
      await store.send(.increment) { _ in throw Boom() }
    }
  }

  @Test(
    "a closure that leaves the state as it was, for an action that changes nothing, fails the send or receive",
    arguments: [Exhaustivity.on, .off])
  func closureChangedNothing(exhaustivity: Exhaustivity) async {
    let store = fixture.makeStore(exhaustivity: exhaustivity)
    var lines: [Int] = []
    let message =
      "expected the state to change, but the closure left it as it was; leave out the closure when no change is expected"
    #expect(TestCoreFailure.closureChangedNothing.description == message)
    await expectIssues([
      ExpectedIssue(message: message, line: lines[0]), ExpectedIssue(message: message, line: lines[1]),
    ]) {
      lines.append(#line + 1)
      await store.send(.noop) { $0.count = $0.count }
      await store.send(.echo(0))  // its .echoed(0) sets the count to 0: no change
      lines.append(#line + 1)
      await store.receive(.echoed(0)) { $0.count = 0 }
    }
    await store.finish()
  }

  @Test("sending while received actions are not asserted fails the send and skips them")
  func sendBeforeReceiving() async {
    let store = fixture.makeStore()
    await store.send(.echo(5))
    var line = 0
    await expectIssues([
      ExpectedIssue(.actionsNotReceivedBeforeSend(step: "send(.increment)", received: [".echoed(5)"]), line: line)
    ]) {
      line = #line + 1
      await store.send(.increment) { $0.count = 6 }
    }
    await store.finish()
  }

  // MARK: - receive

  @Test("receiving another action than the next one fails at the receive")
  func receiveWrongAction() async {
    let store = fixture.makeStore()
    await store.send(.load) { $0.isLoading = true }
    var line = 0
    await expectIssues([
      ExpectedIssue(.unexpectedAction(expected: ".loaded(7)", received: ".loaded(42)"), line: line)
    ]) {
      line = #line + 1
      await store.receive(.loaded(7))
    }
    await store.finish()
  }

  @Test("a received action's state is checked like a send's")
  func receiveStateMismatch() async {
    let store = fixture.makeStore()
    await store.send(.load) { $0.isLoading = true }
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .stateMismatch(
          step: "receive(.loaded(42))",
          differences: [StateDifference(path: "count", expected: "0", actual: "42")]
        ),
        line: line)
    ]) {
      line = #line + 1
      await store.receive(.loaded(42)) { $0.isLoading = false }
    }
    await store.finish()
  }

  @Test("receiving when no effect is in flight fails at once")
  func receiveNothingInFlight() async {
    let store = fixture.makeStore(timeout: .seconds(60))
    await store.send(.increment) { $0.count = 1 }
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .actionNotReceived(expected: ".loaded(1)", timeout: .seconds(60), skipped: [], inFlight: []),
        line: line)
    ]) {
      // Fails without waiting the 60 s: no effect can send it.
      line = #line + 1
      await store.receive(.loaded(1))
    }
  }

  @Test("receiving while an effect sends nothing fails after the timeout and names the effect")
  func receiveTimesOut() async {
    let store = fixture.makeStore()
    let sendLine = #line + 1
    await store.send(.startTimer)
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .actionNotReceived(
          expected: ".tick", timeout: .milliseconds(20), skipped: [],
          inFlight: [origin("send(.startTimer)", line: sendLine)]),
        line: line)
    ]) {
      // The clock is never advanced: the timer never ticks.
      line = #line + 1
      await store.receive(.tick, timeout: .milliseconds(20))
    }
    await store.skipInFlightEffects()
    await store.finish()
  }

  @Test("non-exhaustive receive names the actions it passed over")
  func receivePassesOver() async {
    let store = fixture.makeStore(exhaustivity: .off)
    await store.send(.loadTwice)
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .actionNotReceived(
          expected: ".loaded(3)", timeout: Fixture.timeout, skipped: [".loaded(1)", ".loaded(2)"], inFlight: []),
        line: line)
    ]) {
      line = #line + 1
      await store.receive(.loaded(3))
    }
    #expect(store.state.count == 2)
  }

  // MARK: - skipping

  @Test("skipReceivedActions with nothing to skip fails at its call")
  func skipNothing() async {
    let store = fixture.makeStore()
    await store.send(.increment) { $0.count = 1 }
    var line = 0
    await expectIssues([ExpectedIssue(.noReceivedActionsToSkip, line: line)]) {
      line = #line + 1
      await store.skipReceivedActions()
    }
    #expect(
      TestCoreFailure.noReceivedActionsToSkip.description
        == "there were no received actions to skip (pass strict: false when there may be none)")
  }

  // MARK: - finish and going away

  @Test("finish reports each received action nobody asserted, and the state change, at the send they came from")
  func finishReportsUnasserted() async {
    let store = fixture.makeStore()
    let sendLine = #line + 1
    await store.send(.echo(5))
    let from = origin("send(.echo(5))", line: sendLine)
    await expectIssues([
      ExpectedIssue(.actionNotAsserted(action: ".echoed(5)", origin: from), line: sendLine),
      ExpectedIssue(
        .stateChangeNotAsserted(
          origin: from, differences: [StateDifference(path: "count", expected: "0", actual: "5")]),
        line: sendLine),
    ]) {
      await store.finish()
    }
    #expect(store.state.count == 5)
  }

  @Test("finish reports an effect still running after the timeout, at its send, and cancels it")
  func finishReportsRunningEffect() async {
    let store = fixture.makeStore()
    let sendLine = #line + 1
    await store.send(.startTimer)
    await expectIssues([
      ExpectedIssue(
        .effectStillRunning(origin: origin("send(.startTimer)", line: sendLine), waited: .milliseconds(20)),
        line: sendLine)
    ]) {
      await store.finish(timeout: .milliseconds(20))
    }
    // Cancelled: a second finish has nothing left to report.
    await store.finish()
  }

  @Test("going away reports what is left, at the send it came from")
  func goingAwayReportsLeftovers() async {
    let fixture = self.fixture
    var timerLine = 0
    let echo = { "send(.echo(5)) at TestCoreFailureTests.swift:\(timerLine + 1)" }
    let timer = { "send(.startTimer) at TestCoreFailureTests.swift:\(timerLine)" }
    await expectIssues([
      ExpectedIssue(.actionNotAsserted(action: ".echoed(5)", origin: echo()), line: timerLine + 1),
      ExpectedIssue(
        .stateChangeNotAsserted(
          origin: echo(), differences: [StateDifference(path: "count", expected: "0", actual: "5")]),
        line: timerLine + 1),
      ExpectedIssue(.effectStillRunning(origin: timer(), waited: nil), line: timerLine),
    ]) {
      let store = fixture.makeStore()
      timerLine = #line + 1
      await store.send(.startTimer)
      await store.send(.echo(5))
      // No finish(): the test core goes away here, and its timer is cancelled.
    }
  }

  @Test("a test core released outside the test that made it reports what it left to that test, once")
  func releasedOutsideItsTest() async {
    let fixture = self.fixture
    let test = Test.current.map { $0.displayName ?? $0.name } ?? "?"
    var madeLine = 0
    var sendLine = 0
    await expectIssues([
      ExpectedIssue(
        .outlivedTest(
          .effectStillRunning(origin: origin("send(.startTimer)", line: sendLine), waited: nil),
          test: test, madeAt: "TestCoreFailureTests.swift:\(madeLine)"),
        line: sendLine)
    ]) {
      madeLine = #line + 1
      let handover = Handover(fixture.makeStore())
      sendLine = #line + 1
      await handover.value?.send(.startTimer)
      guard let reported = handover.value?.reporter.task else { return }
      // Released in a task with no test: no task-local context of any test.
      await Task.detached { handover.release() }.value
      await reported.value
    }
  }

  @Test("cancelInFlightEffects reports an effect that ignores cancellation")
  func effectIgnoresCancellation() async {
    let store = fixture.makeStore()
    let sendLine = #line + 1
    await store.send(.wait)
    await fixture.gate.waitForWaiters(1)  // the effect has started: cancelling it now does not stop it
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .effectIgnoredCancellation(origin: origin("send(.wait)", line: sendLine), waited: .milliseconds(20)),
        line: line)
    ]) {
      line = #line + 1
      await store.cancelInFlightEffects(timeout: .milliseconds(20))
    }
    fixture.gate.open()
    await store.finish()
  }

  @Test(
    "a Send used after its effect ended fails the test at the next call, in either mode",
    arguments: [Exhaustivity.on, .off])
  func sendAfterTheEffectEnded(exhaustivity: Exhaustivity) async throws {
    let store = fixture.makeStore(exhaustivity: exhaustivity)
    await store.send(.keep)
    await store.finish()  // the effect has ended
    // The kept `Send` holds its effect, whose closure holds `kept`.
    defer { fixture.kept.removeAll() }
    let send = try #require(fixture.kept.all.first)
    #expect(await send(.loaded(3)) == .effectEnded)
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .sentAfterEffectEnded(action: ".loaded(3)", startedBy: ".keep", madeAt: Fixture.keepingEffectMadeAt),
        line: line)
    ]) {
      line = #line + 1
      await store.send(.noop)
    }
    #expect(store.state.count == 0)
  }

  @Test("an action that leaves two rows of a forEach with one id fails the test, naming the id and the forEach")
  func duplicateIDs() async {
    struct Row: Identifiable, Sendable, Equatable {
      let id: Int
      var done = false
    }
    struct Board: Sendable, Equatable { var rows: [Row] = [] }
    enum Act: Sendable, Equatable {
      case add(Int)
      case row(id: Int, action: Bool)
      static let rowCase = ActionCase(embed: Act.row) {
        if case .row(let id, let done) = $0 { (id, done) } else { nil }
      }
    }
    let logic = Reduce<Board, Act> { board, action in
      if case .add(let id) = action { board.rows.append(Row(id: id)) }
      return .none
    }
    let forEachLine = #line + 1
    let reducer = logic.forEach(\.rows, action: Act.rowCase, element: Reduce { row, done in row.done = done })
    let store = TestCore(initialState: Board(), reducer: reducer)
    await store.send(.add(3)) { $0.rows = [Row(id: 3)] }
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .duplicateID(
          id: "3", collection: "\\Board.rows",
          forEachAt: "AsyncCoreTestingTests/TestCoreFailureTests.swift:\(forEachLine)"),
        line: line)
    ]) {
      line = #line + 1
      await store.send(.add(3)) { $0.rows = [Row(id: 3), Row(id: 3)] }
    }
  }

  @Test("an action a cancelled effect sends is refused without failing the test")
  func sendAfterCancellationIsNotAFailure() async {
    let store = fixture.makeStore()
    await store.send(.waitThenSend)
    await fixture.gate.waitForWaiters(1)
    await store.send(.stopWaiting)  // cancels it; it waits on, ignoring cancellation
    fixture.gate.open()
    await store.finish()  // it sends .loaded(7), refused: no issue, no action to receive
    #expect(store.state.count == 0)
  }

  @Test(
    "an effect that throws with no catch handler fails the test, in either mode", arguments: [Exhaustivity.on, .off])
  func effectThrows(exhaustivity: Exhaustivity) async {
    let store = fixture.makeStore(exhaustivity: exhaustivity)
    await store.send(.fail)
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .effectThrew(error: "Boom()", madeAt: Fixture.failingEffectMadeAt), line: line)
    ]) {
      line = #line + 1
      await store.finish()
    }
    #expect(
      TestCoreFailure.effectThrew(error: "Boom()", madeAt: "App/Feature.swift:40").description
        == "the effect made at App/Feature.swift:40 threw, and has no catch handler: Boom()")
  }
}

/// A reference compared by identity: two states that differ by `==` only.
final class Token: Sendable {}

struct Holder: Sendable, Equatable {
  var token: Token

  static func == (lhs: Holder, rhs: Holder) -> Bool { lhs.token === rhs.token }
}
