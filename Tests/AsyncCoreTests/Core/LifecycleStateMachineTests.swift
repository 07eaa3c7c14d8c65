import Testing

@testable import AsyncCore

/// The transitions of a core's lifecycle, driven directly.
@Suite("Lifecycle state machine")
struct LifecycleStateMachineTests {
  @Test("a graceful shutdown drains a running core")
  func gracefulDrains() {
    var machine = LifecycleStateMachine()
    #expect(machine.phase == .running)
    #expect(machine.shutdown(.graceful) == .drain)
    #expect(machine.phase == .draining)
  }

  @Test("an immediate shutdown cancels, from running or draining")
  func immediateCancels() {
    var running = LifecycleStateMachine()
    #expect(running.shutdown(.immediate) == .cancelEffects)
    #expect(running.phase == .cancelling)
    var draining = LifecycleStateMachine()
    _ = draining.shutdown(.graceful)
    #expect(draining.shutdown(.immediate) == .cancelEffects)
    #expect(draining.phase == .cancelling)
  }

  @Test("phases never move back: a graceful call on a cancelling core leaves it cancelling")
  func neverWidens() {
    var machine = LifecycleStateMachine()
    _ = machine.shutdown(.immediate)
    #expect(machine.shutdown(.graceful) == .drain)
    #expect(machine.phase == .cancelling)
    _ = machine.stop()
    #expect(machine.shutdown(.immediate) == .cancelEffects)
    #expect(machine.shutdown(.graceful) == .drain)
    #expect(machine.phase == .stopped)
  }

  @Test("only the first stop reports that it stopped the core")
  func stopOnce() {
    var machine = LifecycleStateMachine()
    let first = machine.stop()
    let second = machine.stop()
    #expect(first && !second)
    #expect(machine.phase == .stopped)
  }
}
