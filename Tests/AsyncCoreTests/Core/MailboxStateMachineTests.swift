import Testing

@testable import AsyncCore

/// The core's inbox, driven directly: one `mutating` call and the action it
/// returns, with no task and no lock.
@Suite("Mailbox state machine")
struct MailboxStateMachineTests {
  @Test("the first accepted element starts a drain; later ones join it")
  func firstSendStartsTheDrain() {
    var machine = MailboxStateMachine<Int>()
    #expect(machine.send(1, accepted: true) == .startDrain)
    #expect(machine.send(2, accepted: true) == .enqueued)
    #expect(machine.send(contentsOf: [3, 4], accepted: true) == .enqueued)
    #expect(machine.pending == [1, 2, 3, 4] && machine.isDrainScheduled)
  }

  @Test("a refused element is not queued and starts nothing")
  func refusedIsNotQueued() {
    var machine = MailboxStateMachine<Int>()
    #expect(machine.send(1, accepted: false) == .rejected)
    #expect(machine.send(contentsOf: [2], accepted: false) == .rejected)
    #expect(machine.pending.isEmpty && !machine.isDrainScheduled)
  }

  @Test("an empty batch is accepted without scheduling a drain")
  func emptyBatchSchedulesNothing() {
    var machine = MailboxStateMachine<Int>()
    #expect(machine.send(contentsOf: [], accepted: true) == .enqueued)
    #expect(!machine.isDrainScheduled)
  }

  @Test("the drain takes every pending element, then ends unless told to stay scheduled")
  func drainTakesThenEnds() {
    var machine = MailboxStateMachine<Int>()
    _ = machine.send(contentsOf: [1, 2], accepted: true)
    var batch: [Int] = []
    let took = machine.takeBatch(into: &batch, max: .max, stayingScheduled: false)
    #expect(took && batch == [1, 2] && machine.pending.isEmpty)
    batch.removeAll()
    let tookNone = machine.takeBatch(into: &batch, max: .max, stayingScheduled: true)
    #expect(!tookNone)
    #expect(machine.isDrainScheduled, "staying scheduled: a send now must not start a second drain")
    #expect(machine.send(3, accepted: true) == .enqueued)
    _ = machine.takeBatch(into: &batch, max: .max, stayingScheduled: false)
    batch.removeAll()
    let tookNoneAgain = machine.takeBatch(into: &batch, max: .max, stayingScheduled: false)
    #expect(!tookNoneAgain && !machine.isDrainScheduled)
    #expect(machine.send(4, accepted: true) == .startDrain, "the drain ended: the next send starts one")
  }

  @Test("a flush takes the pending elements and leaves the scheduled drain to find none")
  func flushLeavesTheDrainScheduled() {
    var machine = MailboxStateMachine<Int>()
    _ = machine.send(1, accepted: true)
    var batch: [Int] = []
    machine.flush(into: &batch)
    #expect(batch == [1] && machine.pending.isEmpty && machine.isDrainScheduled)
    #expect(machine.scheduleDrainIfNeeded() == .enqueued)
  }

  // MARK: - Slices

  @Test("the drain takes at most a slice, oldest first, and the rest stays pending with the drain scheduled")
  func takeBoundedSlices() {
    var machine = MailboxStateMachine<Int>()
    _ = machine.send(contentsOf: Array(0..<10), accepted: true)
    var batch: [Int] = []
    #expect(machine.takeBatch(into: &batch, max: 4, stayingScheduled: false))
    #expect(batch == [0, 1, 2, 3])
    #expect(machine.pendingCount == 6 && machine.isDrainScheduled)
    #expect(machine.send(10, accepted: true) == .enqueued, "elements left: the drain is still on its way")
    batch.removeAll()
    #expect(machine.takeBatch(into: &batch, max: 4, stayingScheduled: false))
    #expect(batch == [4, 5, 6, 7])
    batch.removeAll()
    #expect(machine.takeBatch(into: &batch, max: 4, stayingScheduled: false))
    #expect(batch == [8, 9, 10])
    batch.removeAll()
    #expect(!machine.takeBatch(into: &batch, max: 4, stayingScheduled: false))
    #expect(!machine.isDrainScheduled)
  }

  @Test("a slice moves the head instead of shifting the array, and drops the taken prefix once past half")
  func takenPrefixIsDroppedPastHalf() {
    var machine = MailboxStateMachine<Int>()
    _ = machine.send(contentsOf: Array(0..<10), accepted: true)
    var batch: [Int] = []
    _ = machine.takeBatch(into: &batch, max: 3, stayingScheduled: false)
    #expect(machine.head == 3 && machine.pending.count == 10, "3 of 10 taken: not compacted yet")
    batch.removeAll()
    _ = machine.takeBatch(into: &batch, max: 3, stayingScheduled: false)
    #expect(machine.head == 0 && machine.pending == [6, 7, 8, 9], "6 of 10 taken: compacted")
  }

  @Test("a slice that takes the last pending element empties the array and resets the head")
  func lastSliceResetsTheHead() {
    var machine = MailboxStateMachine<Int>()
    _ = machine.send(contentsOf: Array(0..<4), accepted: true)
    var batch: [Int] = []
    _ = machine.takeBatch(into: &batch, max: 1, stayingScheduled: false)
    batch.removeAll()
    _ = machine.takeBatch(into: &batch, max: 3, stayingScheduled: false)
    #expect(batch == [1, 2, 3] && machine.head == 0 && machine.pending.isEmpty)
  }

  @Test("a slice limit below one still takes one element")
  func sliceTakesAtLeastOne() {
    var machine = MailboxStateMachine<Int>()
    _ = machine.send(contentsOf: [1, 2], accepted: true)
    var batch: [Int] = []
    #expect(machine.takeBatch(into: &batch, max: 0, stayingScheduled: false))
    #expect(batch == [1])
  }

  @Test("a flush after a slice takes exactly what the slice left, in order")
  func flushAfterASlice() {
    var machine = MailboxStateMachine<Int>()
    _ = machine.send(contentsOf: Array(0..<10), accepted: true)
    var batch: [Int] = []
    _ = machine.takeBatch(into: &batch, max: 2, stayingScheduled: false)
    _ = machine.send(10, accepted: true)
    var flushed: [Int] = []
    machine.flush(into: &flushed)
    #expect(flushed == Array(2...10))
    #expect(machine.pendingCount == 0 && machine.head == 0 && machine.isDrainScheduled)
  }
}
