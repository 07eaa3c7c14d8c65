import Testing

@testable import AsyncCore

/// The drain's decisions, driven directly: one `mutating` call and the step
/// it returns, with no task, no clock and no lock.
@Suite("Drain state machine")
struct DrainStateMachineTests {
  static let slice = 1_000

  // MARK: - Reducing slices

  @Test("a fresh drain stays scheduled through its first empty look and may take a whole slice")
  func freshDrain() {
    let machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.staysScheduledWhenEmpty)
    #expect(machine.takeLimit == Self.slice)
  }

  @Test("a small batch yields at once, so the next batch can grow")
  func smallBatchYields() {
    var machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.reduced(count: DrainStateMachine.smallBatch - 1) == .yield)
    #expect(machine.takeLimit == Self.slice, "a yield starts a new slice")
  }

  @Test("a large batch takes the next one at once, limited to what is left of the slice")
  func largeBatchTakesTheRestOfTheSlice() {
    var machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.reduced(count: 600) == .takeNext)
    #expect(machine.takeLimit == 400)
  }

  @Test("the drain yields once a slice is reduced, and the next slice starts whole")
  func fullSliceYields() {
    var machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.reduced(count: 600) == .takeNext)
    #expect(machine.reduced(count: 400) == .yield)
    #expect(machine.takeLimit == Self.slice)
    #expect(machine.reduced(count: Self.slice) == .yield, "one take of a whole slice yields too")
  }

  @Test("reducing a batch ends the lingering: the next empty look yields again instead of ending")
  func reducingEndsTheLinger() {
    var machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.foundEmpty() == .yield)
    #expect(!machine.staysScheduledWhenEmpty, "lingered once: the next empty take unschedules")
    _ = machine.reduced(count: 10)
    #expect(machine.staysScheduledWhenEmpty)
    #expect(machine.foundEmpty() == .yield)
  }

  @Test("a slice of zero or less is one action")
  func sliceIsAtLeastOne() {
    #expect(DrainStateMachine(slice: 0).takeLimit == 1)
    #expect(DrainStateMachine(slice: -5).slice == 1)
  }

  // MARK: - Ending

  @Test("with no dispatch, the drain lingers once, then ends and starts the next drain afresh")
  func lingerThenExit() {
    var machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.foundEmpty() == .yield)
    #expect(!machine.staysScheduledWhenEmpty)
    #expect(machine.foundEmpty() == .exit)
    #expect(machine.staysScheduledWhenEmpty, "the next drain lingers again")
    #expect(machine.takeLimit == Self.slice)
    #expect(machine.busyLooks == 0 && machine.reducedSinceYield == 0)
  }

  @Test("an exit mid-slice does not carry the slice's count into the next drain")
  func exitResetsTheSlice() {
    var machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.reduced(count: 600) == .takeNext)
    #expect(machine.foundEmpty() == .yield)
    #expect(machine.foundEmpty() == .exit)
    #expect(machine.takeLimit == Self.slice)
  }

  // MARK: - The publication window

  @Test("the first dispatch after a quiet spell publishes at once and opens the window")
  func firstDispatchPublishes() {
    var machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.dispatched() == .publishAndScheduleDrain)
    #expect(machine.isPublicationWindowOpen && !machine.isPublicationDue)
    #expect(machine.staysScheduledWhenEmpty)
  }

  @Test("a dispatch inside the window leaves its publication to the drain")
  func dispatchInsideTheWindowIsCoalesced() {
    var machine = DrainStateMachine(slice: Self.slice)
    _ = machine.dispatched()
    #expect(machine.dispatched() == .leaveToDrain)
    #expect(machine.isPublicationDue && machine.hasDispatchedSinceLook)
    machine.published()
    #expect(!machine.isPublicationDue)
  }

  @Test("while the window is open the drain stays scheduled, even after lingering")
  func windowKeepsTheDrainScheduled() {
    var machine = DrainStateMachine(slice: Self.slice)
    #expect(machine.foundEmpty() == .yield)
    #expect(!machine.staysScheduledWhenEmpty)
    _ = machine.dispatched()
    #expect(machine.staysScheduledWhenEmpty)
  }

  @Test("a look with no new dispatch and nothing due closes the window, and the drain then ends")
  func quietLookClosesTheWindow() {
    var machine = DrainStateMachine(slice: Self.slice)
    _ = machine.dispatched()
    #expect(machine.foundEmpty() == .takeNext)
    #expect(!machine.isPublicationWindowOpen)
    #expect(!machine.staysScheduledWhenEmpty)
    #expect(machine.foundEmpty() == .exit)
    #expect(machine.dispatched() == .publishAndScheduleDrain, "closed: the next dispatch publishes at once")
  }

  @Test("a look with no new dispatch but a publication due publishes it and yields, keeping the window")
  func quietLookPublishesWhatIsDue() {
    var machine = DrainStateMachine(slice: Self.slice)
    _ = machine.dispatched()
    _ = machine.dispatched()
    #expect(machine.foundEmpty() == .yield, "first look: a dispatch came")
    #expect(machine.foundEmpty() == .publishThenYield)
    #expect(machine.isPublicationWindowOpen)
    machine.published()
    #expect(machine.foundEmpty() == .takeNext)
    #expect(!machine.isPublicationWindowOpen)
  }

  @Test("looks that keep finding dispatches yield a few times, then pause off the core, publishing what is due")
  func busyLooksPause() {
    var machine = DrainStateMachine(slice: Self.slice)
    _ = machine.dispatched()
    for _ in 0..<DrainStateMachine.looksBeforePausing {
      #expect(machine.dispatched() == .leaveToDrain)
      #expect(machine.foundEmpty() == .yield)
    }
    #expect(machine.dispatched() == .leaveToDrain)
    #expect(machine.foundEmpty() == .pause(publishingFirst: true))
    machine.published()
    #expect(machine.dispatched() == .leaveToDrain)
    #expect(machine.foundEmpty() == .pause(publishingFirst: true), "still busy: pauses again")
    // A dispatch with nothing due (published meanwhile, by a read of `state`).
    #expect(machine.dispatched() == .leaveToDrain)
    machine.published()
    #expect(machine.foundEmpty() == .pause(publishingFirst: false))
  }

  @Test("a quiet look resets the busy count: the next busy look yields instead of pausing")
  func quietLookResetsBusyLooks() {
    var machine = DrainStateMachine(slice: Self.slice)
    _ = machine.dispatched()
    for _ in 0...DrainStateMachine.looksBeforePausing {
      _ = machine.dispatched()
      _ = machine.foundEmpty()
    }
    #expect(machine.foundEmpty() == .publishThenYield)
    machine.published()
    _ = machine.dispatched()
    #expect(machine.foundEmpty() == .yield)
  }

  @Test("reducing sent actions inside the window leaves the window to the looks that find the mailbox empty")
  func reducingInsideTheWindow() {
    var machine = DrainStateMachine(slice: Self.slice)
    _ = machine.dispatched()
    _ = machine.dispatched()
    #expect(machine.reduced(count: 10) == .yield)
    #expect(machine.isPublicationWindowOpen && machine.isPublicationDue)
  }

  @Test("a yield on an empty look starts a new slice: the next take may hold a whole one")
  func emptyLookYieldResetsTheSlice() {
    var machine = DrainStateMachine(slice: 1_000)
    #expect(machine.reduced(count: 600) == .takeNext)
    #expect(machine.takeLimit == 400)
    #expect(machine.foundEmpty() == .yield, "lingers")
    #expect(machine.takeLimit == 1_000)
    #expect(machine.reduced(count: 600) == .takeNext)
    _ = machine.dispatched()
    _ = machine.dispatched()
    #expect(machine.foundEmpty() == .yield, "a busy look")
    #expect(machine.takeLimit == 1_000)
  }
}
