import Testing

@testable import AsyncCore

/// The effect registry's state machine, one transition at a time, for what
/// pins an effect: cancellers using its task, and end observers (a test
/// clock following it). No task runs; a parked task is a continuation of
/// the test's own, handed back before the test goes on.
@Suite("Effect registry state machine")
struct EffectRegistryStateMachineTests {
  typealias Machine = EffectRegistryStateMachine

  /// Registers an effect marked `ids` and starts it, as a running effect.
  static func running(_ machine: inout Machine, ids: [CancelID] = []) throws -> Int {
    let registered = machine.register(ids: ids, generation: EffectRegistry.nextGeneration(), accepted: true)
    let token = try #require(registered)
    let job = EffectJob(token: token, registry: EffectRegistry(lifecycle: Lifecycle()), lineage: nil, priority: nil) {
      _ in
    }
    let started = machine.start(token, job: job)
    #expect(started)
    return token
  }

  @Test("an effect nothing pins is removed by finish")
  func unpinnedFinish() throws {
    var machine = Machine()
    let token = try Self.running(&machine)
    #expect(machine.finish(token) == .finished)
    #expect(machine.isIdle)
  }

  @Test("the generation handed in is in the token, so a stale token never names the effect in its slot")
  func generationInTheToken() throws {
    var machine = Machine()
    let registeredFirst = machine.register(ids: [], generation: 7, accepted: true)
    let first = try #require(registeredFirst)
    #expect(Machine.generation(of: first) == 7)
    #expect(machine.finish(first) == .finished)
    let registeredSecond = machine.register(ids: [], generation: 8, accepted: true)
    let second = try #require(registeredSecond)
    #expect(Machine.generation(of: second) == 8)
    #expect(first & 0xFFFF_FFFF == second & 0xFFFF_FFFF)  // the same slot
    let staleIsObserved = machine.observeEnd(first) {}
    #expect(!staleIsObserved)
    #expect(machine.inFlight == 1)
  }

  @Test("an end observer pins the effect: finish takes the slow path, which hands the observer back without parking")
  func observerPins() async throws {
    var machine = Machine()
    let token = try Self.running(&machine)
    let isObserved = machine.observeEnd(token) {}
    #expect(isObserved)
    #expect(machine.finish(token) == .pinned)
    await withUnsafeContinuation { task in
      let park = machine.parkFinish(token, task)
      #expect(!park.isParked)
      #expect(park.endObservers.count == 1)
      task.resume()  // not parked: the task goes on
    }
    #expect(machine.finish(token) == .finished)
    #expect(machine.isIdle)
  }

  @Test("an effect not started yet, or finished, cannot be observed")
  func observingWhatIsNotRunning() throws {
    var machine = Machine()
    let registeredPending = machine.register(ids: [], generation: 1, accepted: true)
    let pending = try #require(registeredPending)
    let pendingIsObserved = machine.observeEnd(pending) {}
    #expect(!pendingIsObserved)
    #expect(machine.finish(pending) == .finished)  // no pin was taken
    let token = try Self.running(&machine)
    #expect(machine.finish(token) == .finished)
    let finishedIsObserved = machine.observeEnd(token) {}
    #expect(!finishedIsObserved)
  }

  @Test("with a canceller's pin too, the task parks after taking the observers, and the canceller's unpin lets it go")
  func observerAndCanceller() async throws {
    var machine = Machine()
    let token = try Self.running(&machine, ids: [CancelID(1)])
    let isObserved = machine.observeEnd(token) {}
    #expect(isObserved)
    #expect(machine.cancel(id: CancelID(1), sparing: []).count == 1)  // pinned for its canceller
    #expect(machine.finish(token) == .pinned)
    await withUnsafeContinuation { task in
      let park = machine.parkFinish(token, task)
      #expect(park.isParked)
      #expect(park.endObservers.count == 1)
      // Parked with its work over: nothing more to observe.
      let parkedIsObserved = machine.observeEnd(token) {}
      #expect(!parkedIsObserved)
      let released = machine.unpin(token)
      #expect(released != nil)
      (released ?? task).resume()
    }
    #expect(machine.finish(token) == .finished)
  }

  @Test("a canceller that lets go before the task parks leaves the observer's pin: the task takes it and goes on")
  func cancellerLeavesFirst() async throws {
    var machine = Machine()
    let token = try Self.running(&machine, ids: [CancelID(1)])
    let isObserved = machine.observeEnd(token) {}
    #expect(isObserved)
    #expect(machine.cancel(id: CancelID(1), sparing: []).count == 1)
    #expect(machine.unpin(token) == nil)  // the observer still pins it; no task parked
    #expect(machine.finish(token) == .pinned)
    await withUnsafeContinuation { task in
      let park = machine.parkFinish(token, task)
      #expect(!park.isParked)
      #expect(park.endObservers.count == 1)
      task.resume()
    }
    #expect(machine.finish(token) == .finished)
  }
}
