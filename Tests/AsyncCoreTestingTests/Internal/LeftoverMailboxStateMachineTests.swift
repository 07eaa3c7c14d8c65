import Testing

@testable import AsyncCoreTesting

/// The hand-over between a test core going away and the task that reports
/// what it left, one transition at a time.
@Suite("Leftover mailbox state machine")
struct LeftoverMailboxStateMachineTests {
  typealias Machine = LeftoverMailboxStateMachine<Int>

  let reports = [LeftoverReporter.Report(message: "left", sourceLocation: nil)]

  @Test("the task parks first: the reports resume it")
  func parkedFirst() {
    var machine = Machine()
    #expect(machine.take(7) == nil)
    #expect(machine.deliver(reports) == 7)
  }

  @Test("the reports come first: the task takes them without parking")
  func deliveredFirst() {
    var machine = Machine()
    #expect(machine.deliver(reports) == nil)
    #expect(machine.take(7)?.map(\.message) == ["left"])
  }
}
