import Testing

@testable import AsyncCore

/// The recorder's state machine, one call at a time: no core, no clock, no
/// tasks.
@Suite("Recorder state machine")
struct RecorderStateMachineTests {
  typealias Machine = RecorderStateMachine<Int, String>

  @Test("under the limit it keeps every action in order, from the state it started with")
  func keepsEveryActionUnderTheLimit() {
    var machine = Machine(limit: 3, initialState: 10)
    do {
      let result = machine.append("a", at: .seconds(1), leaving: 11)
      #expect(result)
    }
    do {
      let result = machine.append("b", at: .seconds(2), leaving: 12)
      #expect(result)
    }
    #expect(
      machine.recording()
        == Recording(
          initialState: 10, entries: [.init(action: "a", time: .seconds(1)), .init(action: "b", time: .seconds(2))],
          finalState: 12))
  }

  @Test("with nothing recorded the initial and final states are the starting state")
  func emptyRecordingHasTheStartingStateTwice() {
    let machine = Machine(limit: 3, initialState: 7)
    #expect(machine.recording() == Recording(initialState: 7, entries: [], finalState: 7))
  }

  @Test("past the limit the oldest falls out and the initial state is the one after it")
  func oldestFallsOut() {
    var machine = Machine(limit: 2, initialState: 0)
    for step in 1...5 { machine.append("\(step)", at: .seconds(step), leaving: step * 10) }
    #expect(machine.count == 2)
    #expect(
      machine.recording()
        == Recording(
          initialState: 30, entries: [.init(action: "4", time: .seconds(4)), .init(action: "5", time: .seconds(5))],
          finalState: 50))
  }

  @Test("a limit of 1 keeps the newest action and the state before it")
  func limitOne() {
    var machine = Machine(limit: 1, initialState: 0)
    machine.append("a", at: .zero, leaving: 1)
    machine.append("b", at: .seconds(1), leaving: 2)
    #expect(
      machine.recording() == Recording(initialState: 1, entries: [.init(action: "b", time: .seconds(1))], finalState: 2)
    )
  }

  @Test("stop reports the first time only; a stopped machine keeps what it held and takes nothing more")
  func stopKeepsWhatItHeld() {
    var machine = Machine(limit: 3, initialState: 0)
    machine.append("a", at: .zero, leaving: 1)
    do {
      let result = machine.stop()
      #expect(result)
    }
    do {
      let result = machine.stop()
      #expect(!result)
    }
    do {
      let result = machine.append("b", at: .seconds(1), leaving: 2)
      #expect(!result)
    }
    #expect(
      machine.recording() == Recording(initialState: 0, entries: [.init(action: "a", time: .zero)], finalState: 1))
  }

  @Test("release drops what it held, and reports whether it was recording")
  func releaseDropsEverything() {
    var recording = Machine(limit: 3, initialState: 0)
    recording.append("a", at: .zero, leaving: 1)
    do {
      let result = recording.release()
      #expect(result)
    }
    #expect(recording.count == 0)
    #expect(recording.phase == .released)
    var stopped = Machine(limit: 3, initialState: 0)
    _ = stopped.stop()
    let wasRecording = stopped.release()
    #expect(!wasRecording)
  }
}
