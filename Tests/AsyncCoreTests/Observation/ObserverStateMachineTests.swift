import Testing

@testable import AsyncCore

/// The delivery state of one observer, driven directly: one `mutating` call
/// and the action it returns, with no task and no clock.
@Suite("Observer state machine")
struct ObserverStateMachineTests {
  typealias Machine = ObserverStateMachine<Int>

  /// The element `next()` returns, or `nil` if it would suspend.
  func taken(_ machine: inout Machine) -> Int?? {
    guard case .return(let element) = machine.next() else { return nil }
    return .some(element)
  }

  @Test("latest: a new element replaces the pending one, and the consumer takes only the newest")
  func latestKeepsNewest() {
    var machine = Machine(policy: .latest)
    guard case .none = machine.deliver(1, hasComparison: false) else {
      Issue.record("a delivery with no parked consumer must only buffer")
      return
    }
    guard case .none = machine.deliver(2, hasComparison: false) else {
      Issue.record("a second delivery must only buffer")
      return
    }
    let taken1 = taken(&machine)
    #expect(taken1 == .some(2))
    let taken2 = taken(&machine)
    #expect(taken2 == nil, "nothing left: the consumer suspends")
  }

  @Test("all: every element is kept, in order")
  func allKeepsEvery() {
    var machine = Machine(policy: .all)
    for element in 1...3 { _ = machine.deliver(element, hasComparison: true) }
    let taken3 = taken(&machine)
    #expect(taken3 == .some(1))
    let taken4 = taken(&machine)
    #expect(taken4 == .some(2))
    let taken5 = taken(&machine)
    #expect(taken5 == .some(3))
    let taken6 = taken(&machine)
    #expect(taken6 == nil)
  }

  @Test("latest with a comparison: nothing pending asks for no comparison")
  func noComparisonWithNothingPending() {
    var machine = Machine(policy: .latest)
    _ = machine.deliver(1, hasComparison: true)
    let taken7 = taken(&machine)
    #expect(taken7 == .some(1))
    guard case .none = machine.deliver(2, hasComparison: true) else {
      Issue.record("the consumer holds the last value published: the core has compared already")
      return
    }
    let taken8 = taken(&machine)
    #expect(taken8 == .some(2))
  }

  @Test("latest with a comparison and a value pending: the machine asks for a comparison with what the consumer holds")
  func asksForComparisonWithHeld() {
    var machine = Machine(policy: .latest)
    _ = machine.deliver(0, hasComparison: true)
    let taken9 = taken(&machine)
    #expect(taken9 == .some(0))
    _ = machine.deliver(1, hasComparison: true)
    guard case .compare(let held) = machine.deliver(0, hasComparison: true) else {
      Issue.record("a pending value and a comparison must ask for a comparison")
      return
    }
    #expect(held == 0)
    // 0 is what the consumer holds: the pending 1 goes, nothing is new.
    let resumption = machine.deliver(0, isDuplicateOfTaken: true)
    #expect(resumption == nil)
    let taken10 = taken(&machine)
    #expect(taken10 == nil)
  }

  @Test("a comparison answered not-duplicate buffers the element")
  func comparedDifferentIsBuffered() {
    var machine = Machine(policy: .latest)
    _ = machine.deliver(0, hasComparison: true)
    _ = taken(&machine)
    _ = machine.deliver(1, hasComparison: true)
    _ = machine.deliver(2, hasComparison: true)
    let resumption = machine.deliver(2, isDuplicateOfTaken: false)
    #expect(resumption == nil)
    let taken11 = taken(&machine)
    #expect(taken11 == .some(2))
  }

  @Test("a comparison made stale by the consumer taking the pending value delivers the element")
  func staleComparisonDelivers() {
    var machine = Machine(policy: .latest)
    _ = machine.deliver(0, hasComparison: true)
    _ = taken(&machine)
    _ = machine.deliver(1, hasComparison: true)
    guard case .compare = machine.deliver(0, hasComparison: true) else {
      Issue.record("expected a comparison")
      return
    }
    // Meanwhile, outside the lock, the consumer takes 1: it now holds 1,
    // which 0 differs from, whatever the comparison with 0 said.
    let taken12 = taken(&machine)
    #expect(taken12 == .some(1))
    let resumption = machine.deliver(0, isDuplicateOfTaken: true)
    #expect(resumption == nil)
    let taken13 = taken(&machine)
    #expect(taken13 == .some(0))
  }

  @Test("finish: the consumer still takes what is buffered, then the end; later deliveries are dropped")
  func finishKeepsBuffered() {
    var machine = Machine(policy: .all)
    _ = machine.deliver(1, hasComparison: false)
    let (endedActive, resumption) = machine.finish()
    #expect(endedActive && resumption == nil)
    let finishedAgain = machine.finish()
    #expect(finishedAgain.endedActive == false, "a second finish ends nothing")
    guard case .none = machine.deliver(2, hasComparison: false) else {
      Issue.record("a finished observer must drop deliveries")
      return
    }
    let taken14 = taken(&machine)
    #expect(taken14 == .some(1))
    let taken15 = taken(&machine)
    #expect(taken15 == .some(nil))
  }

  @Test("cancel: the buffer is dropped and the consumer ends at once")
  func cancelDropsBuffer() {
    var machine = Machine(policy: .latest)
    _ = machine.deliver(1, hasComparison: false)
    let cancelled = machine.cancel()
    #expect(cancelled.endedActive)
    #expect(machine.phase == .cancelled)
    let taken16 = taken(&machine)
    #expect(taken16 == .some(nil))
    let cancelledAgain = machine.cancel()
    #expect(cancelledAgain.endedActive == false)
  }

  @Test("an observation has one iterator, and ends when its stream is released only if none was made")
  func oneIterator() {
    var machine = Machine(policy: .latest)
    #expect(machine.endsWhenStreamReleased)
    let first = machine.makeIterator()
    let second = machine.makeIterator()
    #expect(first && !second)
    #expect(!machine.endsWhenStreamReleased)
  }
}

/// Where an observer runs its `removeDuplicates:` comparison.
@Suite("Observer comparisons outside the lock")
struct ObserverComparisonTests {
  @Test("an observer's removeDuplicates comparison runs with the observer's lock free")
  func comparisonRunsOutsideTheLock() {
    let observer = AsyncCore.Observer<Int>(policy: .latest, counter: ObserverCounter())
    let lockFree = Locked<[Bool]>([])
    let isDuplicate: @Sendable (Int, Int) -> Bool = { old, new in
      let isFree = observer.machine.mutex.withLockIfAvailable { _ in true } ?? false
      lockFree.withLock { $0.append(isFree) }
      return old == new
    }
    observer.deliver(0, isDuplicate: isDuplicate)
    _ = observer.machine.withLock { $0.next() }  // the consumer takes 0
    observer.deliver(1, isDuplicate: isDuplicate)  // pending
    observer.deliver(0, isDuplicate: isDuplicate)  // compared with the held 0
    let seen = lockFree.withLock { $0 }
    #expect(seen == [true])
    // 0 duplicates what the consumer holds: the pending 1 is dropped.
    guard case .suspend = observer.machine.withLock({ $0.next() }) else {
      Issue.record("nothing new should be left to take")
      return
    }
  }
}
