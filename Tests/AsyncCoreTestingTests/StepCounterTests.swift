import AsyncCore
import AsyncCoreTesting
import Testing

/// Unicore's counter with a step, tested with a test core.
@Suite("Counter with a step", .timeLimit(.minutes(5)))
struct StepCounterTests {
  @Test("increments and decrements by the step, which the user can change")
  func countsBySteps() async {
    let store = TestCore(initialState: StepCounter(), reducer: Reduce(reduceStepCounter))
    await store.send(.increment) { $0.count = 1 }
    await store.send(.setStep(5)) { $0.step = 5 }
    await store.send(.increment) { $0.count = 6 }
    await store.send(.decrement) { $0.count = 1 }
    await store.send(.setStep(-2)) { $0.step = -2 }
    await store.send(.increment) { $0.count = -1 }
    await store.finish()
  }

  @Test("n increments by a step add n × step", arguments: [2, 3, 10])
  func increments(step: Int) async {
    let store = TestCore(initialState: StepCounter(), reducer: Reduce(reduceStepCounter))
    await store.send(.setStep(step)) { $0.step = step }
    for times in 1...4 {
      await store.send(.increment) { $0.count = times * step }
    }
    await store.finish()
  }

  @Test("a test that expects the count to change with the step fails, naming both fields")
  func stepChangeLeavesCount() async {
    let store = TestCore(initialState: StepCounter(count: 3), reducer: Reduce(reduceStepCounter))
    var line = 0
    await expectIssues([
      ExpectedIssue(
        .stateMismatch(
          step: "send(.setStep(4))",
          differences: [
            StateDifference(path: "count", expected: "4", actual: "3"),
            StateDifference(path: "step", expected: "1", actual: "4"),
          ]),
        line: line)
    ]) {
      line = #line + 1
      await store.send(.setStep(4)) { $0.count = 4 }
    }
  }
}
