import Testing

@testable import AsyncCore

/// The core's inbox, driven directly: one `mutating` call and the action it
/// returns, with no task and no lock.
@Suite("Mailbox state machine")
struct MailboxStateMachineTests {
  @Test("the first accepted element starts a drain; later ones join it")
  func firstSendStartsTheDrain() {
    var machine = MailboxStateMachine<Int, Int>()
    #expect(machine.send(1, accepted: true) == .startDrain)
    #expect(machine.send(2, accepted: true) == .enqueued)
    #expect(machine.send(contentsOf: [3, 4], accepted: true) == .enqueued)
    #expect(machine.pending == [1, 2, 3, 4] && machine.isDrainScheduled)
  }

  @Test("a refused element is not queued and starts nothing")
  func refusedIsNotQueued() {
    var machine = MailboxStateMachine<Int, Int>()
    #expect(machine.send(1, accepted: false) == .rejected)
    #expect(machine.send(contentsOf: [2], accepted: false) == .rejected)
    #expect(machine.pending.isEmpty && !machine.isDrainScheduled)
  }

  @Test("an empty batch is accepted without scheduling a drain")
  func emptyBatchSchedulesNothing() {
    var machine = MailboxStateMachine<Int, Int>()
    #expect(machine.send(contentsOf: [], accepted: true) == .enqueued)
    #expect(!machine.isDrainScheduled)
  }

  @Test("the drain takes every pending element, then ends unless told to stay scheduled")
  func drainTakesThenEnds() {
    var machine = MailboxStateMachine<Int, Int>()
    _ = machine.send(contentsOf: [1, 2], accepted: true)
    var batch: [Int] = []
    let took = machine.takeBatch(into: &batch, stayingScheduled: false)
    #expect(took && batch == [1, 2] && machine.pending.isEmpty)
    batch.removeAll()
    let tookNone = machine.takeBatch(into: &batch, stayingScheduled: true)
    #expect(!tookNone)
    #expect(machine.isDrainScheduled, "staying scheduled: a send now must not start a second drain")
    #expect(machine.send(3, accepted: true) == .enqueued)
    _ = machine.takeBatch(into: &batch, stayingScheduled: false)
    batch.removeAll()
    let tookNoneAgain = machine.takeBatch(into: &batch, stayingScheduled: false)
    #expect(!tookNoneAgain && !machine.isDrainScheduled)
    #expect(machine.send(4, accepted: true) == .startDrain, "the drain ended: the next send starts one")
  }

  @Test("a flush takes the pending elements and leaves the scheduled drain to find none")
  func flushLeavesTheDrainScheduled() {
    var machine = MailboxStateMachine<Int, Int>()
    _ = machine.send(1, accepted: true)
    var batch: [Int] = []
    machine.flush(into: &batch)
    #expect(batch == [1] && machine.pending.isEmpty && machine.isDrainScheduled)
    #expect(machine.scheduleDrainIfNeeded() == .enqueued)
  }

  @Test("a take or a flush hands over the pending array's own buffer, however much the drain took before")
  func takeAndFlushSwapTheArray() {
    var machine = MailboxStateMachine<Int, Int>()
    _ = machine.send(contentsOf: Array(0..<10), accepted: true)
    var batch: [Int] = []
    _ = machine.takeBatch(into: &batch, stayingScheduled: false)
    _ = machine.send(contentsOf: Array(10..<1_000), accepted: true)
    // O(1) under the lock: the same storage changes hands, nothing is copied.
    let queued = Self.storage(of: machine.pending)
    var taken: [Int] = []
    _ = machine.takeBatch(into: &taken, stayingScheduled: false)
    #expect(Self.storage(of: taken) == queued && taken == Array(10..<1_000))
    _ = machine.send(contentsOf: Array(1_000..<2_000), accepted: true)
    let queuedAgain = Self.storage(of: machine.pending)
    var flushed: [Int] = []
    machine.flush(into: &flushed)
    #expect(Self.storage(of: flushed) == queuedAgain && flushed == Array(1_000..<2_000))
  }

  static func storage(of array: [Int]) -> UnsafeRawPointer? {
    array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
  }
}
