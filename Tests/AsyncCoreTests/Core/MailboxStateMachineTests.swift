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

  @Test("an element counts toward the capacity until its batch is reported reduced: capacity 4, one taken, 3 more in")
  func takenElementCountsUntilReported() {
    var machine = MailboxStateMachine<Int, Int>(capacity: 4)
    #expect(machine.send(0, accepted: true) == .startDrain)
    var batch: [Int] = []
    #expect(machine.takeBatch(into: &batch, stayingScheduled: false) && batch == [0])
    // The drain holds [0], being reduced: it still counts.
    let results = (1...5).map { machine.send($0, accepted: true) }
    #expect(results == [.enqueued, .enqueued, .enqueued, .full, .full])
    #expect(machine.depth == 4 && machine.pending == [1, 2, 3])
    _ = machine.report(reduced: 1, accepted: true)
    #expect(machine.depth == 3)
    #expect(machine.send(6, accepted: true) == .enqueued, "room again once the batch is reported reduced")
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

  // MARK: - A capacity

  typealias Machine = MailboxStateMachine<Int, String>

  @Test("with a capacity, a send that does not fit is .full and queues nothing; a batch fits whole or not at all")
  func fullMailboxRefusesWithoutQueueing() {
    var machine = Machine(capacity: 3)
    #expect(machine.send(1, accepted: true) == .startDrain)
    #expect(machine.send(contentsOf: [2, 3, 4], accepted: true) == .full)
    #expect(machine.send(contentsOf: [2, 3], accepted: true) == .enqueued)
    #expect(machine.send(4, accepted: true) == .full)
    #expect(machine.send(4, accepted: false) == .rejected, "a refusal by the lifecycle is told first")
    #expect(machine.pending == [1, 2, 3] && machine.depth == 3 && machine.highWaterMark == 3)
  }

  @Test("taking does not make room; a report of what was reduced does, and the high-water mark stays")
  func roomIsMadeByReports() {
    var machine = Machine(capacity: 2)
    _ = machine.send(contentsOf: [1, 2], accepted: true)
    var batch: [Int] = []
    _ = machine.takeBatch(into: &batch, stayingScheduled: false)
    #expect(machine.send(3, accepted: true) == .full, "taken, not reduced")
    let admission = machine.report(reduced: 2, accepted: true)
    #expect(admission.admitted.isEmpty && admission.refused.isEmpty)
    #expect(machine.depth == 0 && machine.highWaterMark == 2)
    #expect(machine.send(3, accepted: true) == .enqueued)
  }

  @Test("suspend queues when there is room, registers a waiter when full, and refuses a cancelled task")
  func suspendDecides() {
    var machine = Machine(capacity: 1)
    #expect(machine.suspend(id: 1, element: 1, waiter: "a", accepted: true, cancelled: false) == .sent(.startDrain))
    #expect(machine.suspend(id: 2, element: 2, waiter: "b", accepted: true, cancelled: true) == .cancelled)
    #expect(machine.suspend(id: 3, element: 3, waiter: "c", accepted: true, cancelled: false) == .waiting)
    #expect(machine.suspend(id: 4, element: 4, waiter: "d", accepted: false, cancelled: false) == .sent(.rejected))
    #expect(machine.waiters.map(\.id) == [3])
    #expect(machine.pending == [1])
  }

  @Test("a report admits waiters oldest first into the room it made; the rest keep waiting, and nobody overtakes them")
  func reportAdmitsOldestFirst() {
    var machine = Machine(capacity: 2)
    _ = machine.send(contentsOf: [1, 2], accepted: true)
    for (id, name) in ["a", "b", "c"].enumerated() {
      #expect(machine.suspend(id: id, element: 10 + id, waiter: name, accepted: true, cancelled: false) == .waiting)
    }
    var batch: [Int] = []
    _ = machine.takeBatch(into: &batch, stayingScheduled: false)
    let first = machine.report(reduced: 1, accepted: true)
    #expect(first.admitted == ["a"] && machine.pending == [10])
    #expect(machine.send(99, accepted: true) == .full, "b and c wait: a send does not overtake them")
    batch.removeAll()
    _ = machine.takeBatch(into: &batch, stayingScheduled: false)
    #expect(batch == [10])
    let second = machine.report(reduced: 2, accepted: true)  // 2 and 10
    #expect(second.admitted == ["b", "c"] && machine.pending == [11, 12])
    #expect(machine.waiters.isEmpty && machine.depth == 2)
  }

  @Test("a cancelled waiter is removed by id, wherever it is in line; a second cancel finds nothing")
  func cancelRemovesById() {
    var machine = Machine(capacity: 1)
    _ = machine.send(1, accepted: true)
    for (id, name) in ["a", "b", "c"].enumerated() {
      _ = machine.suspend(id: id, element: 10 + id, waiter: name, accepted: true, cancelled: false)
    }
    #expect(machine.cancel(id: 1) == "b")
    #expect(machine.cancel(id: 1) == nil)
    #expect(machine.waiters.map(\.waiter) == ["a", "c"])
    #expect(machine.report(reduced: 1, accepted: true).admitted == ["a"])
    #expect(machine.cancel(id: 0) == nil, "admitted already: the cancellation comes too late")
  }

  @Test("once the lifecycle refuses, a report refuses every waiter, and refuseWaiters empties the line")
  func refusalEndsEveryWait() {
    var machine = Machine(capacity: 1)
    _ = machine.send(1, accepted: true)
    _ = machine.suspend(id: 1, element: 10, waiter: "a", accepted: true, cancelled: false)
    _ = machine.suspend(id: 2, element: 11, waiter: "b", accepted: true, cancelled: false)
    let admission = machine.report(reduced: 1, accepted: false)
    #expect(admission.admitted.isEmpty && admission.refused == ["a", "b"] && machine.waiters.isEmpty)
    _ = machine.send(2, accepted: true)
    _ = machine.suspend(id: 3, element: 12, waiter: "c", accepted: true, cancelled: false)
    #expect(machine.refuseWaiters() == ["c"] && machine.waiters.isEmpty)
  }

  @Test("an effect's follow-up bypasses the capacity and counts in the depth")
  func followUpsBypassTheCapacity() {
    var machine = Machine(capacity: 1)
    _ = machine.send(1, accepted: true)
    #expect(machine.send(2, accepted: true) == .full)
    #expect(machine.send(2, accepted: true, bypassingCapacity: true) == .enqueued)
    #expect(machine.depth == 2 && machine.highWaterMark == 2)
  }
}
