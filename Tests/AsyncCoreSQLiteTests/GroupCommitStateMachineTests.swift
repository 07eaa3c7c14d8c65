import AsyncCoreJournal
import Testing

@Suite("The group commit state machine")
struct GroupCommitStateMachineTests {
  @Test("a writer that starts with nothing to do sleeps")
  func startsAsleep() {
    var machine = GroupCommitStateMachine()
    #expect(machine.nextBatch() == .sleep)
  }

  @Test("the first request wakes the sleeping writer; the next ones wait without a signal")
  func firstRequestWakes() {
    var machine = GroupCommitStateMachine()
    #expect(machine.submit(1) == .wakeWriter)
    #expect(machine.submit(2) == .none)
    #expect(machine.nextBatch() == .commit([1, 2]))
  }

  @Test("requests that arrive during a commit form the next batch, in order")
  func requestsDuringACommitGoNext() {
    var machine = GroupCommitStateMachine()
    _ = machine.submit(1)
    #expect(machine.nextBatch() == .commit([1]))
    #expect(machine.submit(2) == .none)
    #expect(machine.submit(3) == .none)
    #expect(machine.nextBatch() == .commit([2, 3]))
    #expect(machine.nextBatch() == .sleep)
  }

  @Test("after a batch with nothing new the writer sleeps, and the next request wakes it")
  func sleepsThenWakes() {
    var machine = GroupCommitStateMachine()
    _ = machine.submit(1)
    _ = machine.nextBatch()
    #expect(machine.nextBatch() == .sleep)
    #expect(machine.submit(2) == .wakeWriter)
    #expect(machine.nextBatch() == .commit([2]))
  }

  @Test("a wake-up whose request a batch already took finds nothing, and sleeps again")
  func spuriousWakeSleeps() {
    var machine = GroupCommitStateMachine()
    _ = machine.submit(1)  // signalled
    #expect(machine.nextBatch() == .commit([1]))  // taken before the writer waited
    #expect(machine.nextBatch() == .sleep)  // the wait returns at once: the signal
    #expect(machine.nextBatch() == .sleep)
  }

  @Test("closing an idle writer wakes it to stop")
  func closeIdle() {
    var machine = GroupCommitStateMachine()
    #expect(machine.close() == .wakeWriter)
    #expect(machine.nextBatch() == .stop)
    #expect(machine.nextBatch() == .stop)
  }

  @Test("closing during a commit still commits what waits, then stops")
  func closeDrains() {
    var machine = GroupCommitStateMachine()
    _ = machine.submit(1)
    _ = machine.nextBatch()
    _ = machine.submit(2)
    #expect(machine.close() == .none)
    #expect(machine.nextBatch() == .commit([2]))
    #expect(machine.nextBatch() == .stop)
  }

  @Test("closing a woken writer commits what it was woken for")
  func closeWoken() {
    var machine = GroupCommitStateMachine()
    _ = machine.submit(1)
    #expect(machine.close() == .none)
    #expect(machine.nextBatch() == .commit([1]))
    #expect(machine.nextBatch() == .stop)
  }

  @Test("a request after close is refused, and closing twice changes nothing")
  func refusedAfterClose() {
    var machine = GroupCommitStateMachine()
    _ = machine.submit(1)
    _ = machine.close()
    #expect(machine.submit(2) == .refuse)
    #expect(machine.close() == .none)
    #expect(machine.nextBatch() == .commit([1]))
    #expect(machine.submit(3) == .refuse)
    #expect(machine.nextBatch() == .stop)
    #expect(machine.close() == .none)
  }
}
