import Testing

@testable import AsyncCore

/// The durable core's decisions, transition by transition, with no task.
@Suite("Journal state machine")
struct JournalStateMachineTests {
  final class Key {}

  @Test("the turn is one caller's at a time; waiters get it in the order they asked")
  func turnsAreExclusiveAndFirstComeFirstServed() {
    var machine = JournalStateMachine()
    do {
      let result = machine.turnRequested(1)
      #expect(result == .now)
    }
    do {
      let result = machine.turnRequested(2)
      #expect(result == .wait)
    }
    do {
      let result = machine.turnRequested(3)
      #expect(result == .wait)
    }
    do {
      let result = machine.releaseTurn()
      #expect(result == 2)
    }
    #expect(machine.turnHeld)
    do {
      let result = machine.releaseTurn()
      #expect(result == 3)
    }
    do {
      let result = machine.releaseTurn()
      #expect(result == nil)
    }
    #expect(!machine.turnHeld)
    do {
      let result = machine.turnRequested(4)
      #expect(result == .now)
    }
  }

  @Test("a reader waits while the state holds a slice not yet appended, and goes when the turn finishes")
  func readersWaitForTheAppend() {
    var machine = JournalStateMachine()
    do {
      let result = machine.readerArrived(1, position: 0)
      #expect(result == .now)
    }
    do {
      let result = machine.turnRequested(10)
      #expect(result == .now)
    }
    machine.took(3)
    // Ahead of the journal: even a reader of position 0 waits.
    do {
      let result = machine.readerArrived(2, position: 0)
      #expect(result == .wait)
    }
    do {
      let result = machine.readerArrived(3, position: 3)
      #expect(result == .wait)
    }
    do {
      let result = machine.readerArrived(4, position: 5)
      #expect(result == .wait)
    }
    machine.appended(snapshotDue: false, wroteRecords: true)
    let release = machine.finished()
    #expect(release.readers == [2, 3])
    #expect(machine.passed == 3)
    #expect(machine.readersToRun == 2)
    do {
      let result = machine.readerRan()
      #expect(!result)
    }
    do {
      let result = machine.readerRan()
      #expect(result)
    }
    do {
      let result = machine.releaseTurn()
      #expect(result == nil)
    }
    do {
      let result = machine.readerArrived(5, position: 3)
      #expect(result == .now)
    }
  }

  @Test("a dispatcher goes when its last action's turn finishes, with the refusal of the first refused one")
  func dispatchersGoWithTheirTurn() {
    var machine = JournalStateMachine()
    let keys = (Key(), Key())
    let one = ObjectIdentifier(keys.0)
    let two = ObjectIdentifier(keys.1)
    defer { withExtendedLifetime(keys) {} }
    do {
      let result = machine.dispatcherArrived(one, count: 1)
      #expect(result == .wait)
    }
    do {
      let result = machine.dispatcherArrived(two, count: 3)
      #expect(result == .wait)
    }
    do {
      let result = machine.turnRequested(1)
      #expect(result == .now)
    }
    machine.took(3)
    machine.dealtWith(one)
    do {
      let result = machine.refused(two, .journal(MemoryError.first))
      #expect(result)
    }
    do {
      let result = machine.refused(two, .journal(MemoryError.second))
      #expect(result)
    }
    machine.dealtWith(two)
    machine.dealtWith(two)
    // Not a dispatcher: its refusal goes to the diagnostics handler.
    do {
      let result = machine.refused(nil, .shutDown)
      #expect(!result)
    }
    machine.appended(snapshotDue: false, wroteRecords: true)
    let first = machine.finished()
    #expect(first.dispatchers == [one: CoreError?.none])
    _ = machine.releaseTurn()
    do {
      let result = machine.turnRequested(2)
      #expect(result == .now)
    }
    machine.took(1)
    machine.dealtWith(two)
    machine.appended(snapshotDue: false, wroteRecords: true)
    do {
      let result = machine.finished()
      #expect(result.dispatchers == [two: .journal(MemoryError.first)])
    }
  }

  @Test("the journal says a snapshot is due; it stays due until taken")
  func snapshotsAreDueUntilTaken() {
    var machine = JournalStateMachine()
    do {
      let result = machine.turnRequested(1)
      #expect(result == .now)
    }
    machine.took(1)
    machine.appended(snapshotDue: true, wroteRecords: true)
    #expect(machine.isSnapshotDue)
    _ = machine.finished()
    #expect(machine.isSnapshotDue)
    machine.snapshotTaken()
    #expect(!machine.isSnapshotDue)
  }

  @Test("records appended since the last sync make a sync worth doing; a turn with none does not")
  func unsyncedRecords() {
    var machine = JournalStateMachine()
    #expect(!machine.hasUnsynced)
    do {
      let result = machine.turnRequested(1)
      #expect(result == .now)
    }
    machine.took(1)
    machine.appended(snapshotDue: false, wroteRecords: false)
    #expect(!machine.hasUnsynced)
    machine.appended(snapshotDue: false, wroteRecords: true)
    #expect(machine.hasUnsynced)
    machine.synced()
    #expect(!machine.hasUnsynced)
  }

  @Test("a failure lets everyone go and refuses every later turn and dispatcher; readers read at once")
  func aFailureEndsEverything() {
    var machine = JournalStateMachine()
    let keys = (Key(), Key())
    let waiting = ObjectIdentifier(keys.0)
    let later = ObjectIdentifier(keys.1)
    defer { withExtendedLifetime(keys) {} }
    do {
      let result = machine.dispatcherArrived(waiting, count: 1)
      #expect(result == .wait)
    }
    do {
      let result = machine.turnRequested(1)
      #expect(result == .now)
    }
    do {
      let result = machine.turnRequested(2)
      #expect(result == .wait)
    }
    machine.took(1)
    do {
      let result = machine.readerArrived(7, position: 1)
      #expect(result == .wait)
    }
    let error = CoreError.journal(MemoryError.first)
    let failed = machine.failed(error)
    #expect(failed.dispatchers == [waiting])
    #expect(failed.readers == [7])
    #expect(failed.turnWaiters == [2])
    #expect(!machine.turnHeld)
    do {
      let result = machine.turnRequested(3)
      #expect(result == .refused(error))
    }
    do {
      let result = machine.dispatcherArrived(later, count: 1)
      #expect(result == .refused(error))
    }
    do {
      let result = machine.readerArrived(8, position: 100)
      #expect(result == .now)
    }
    #expect(machine.wasToldOfFailure(waiting))
    #expect(!machine.wasToldOfFailure(later))
    #expect(!machine.wasToldOfFailure(nil))
  }

  @Test("a dispatcher the mailbox refused is forgotten: a turn never lets it go")
  func aRefusedDispatcherIsForgotten() {
    var machine = JournalStateMachine()
    let object = Key()
    let key = ObjectIdentifier(object)
    defer { withExtendedLifetime(object) {} }
    do {
      let result = machine.dispatcherArrived(key, count: 1)
      #expect(result == .wait)
    }
    machine.dispatcherLeft(key)
    do {
      let result = machine.turnRequested(1)
      #expect(result == .now)
    }
    machine.took(1)
    machine.dealtWith(key)
    machine.appended(snapshotDue: false, wroteRecords: true)
    do {
      let result = machine.finished()
      #expect(result.dispatchers.isEmpty)
    }
  }
}

enum MemoryError: Error, Equatable {
  case first, second
}
