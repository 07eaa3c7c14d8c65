#if ServiceLifecycle
  import AsyncCore
  import AsyncCoreTesting
  import ServiceLifecycle
  import ServiceLifecycleTestKit
  import Testing

  private enum Step: Sendable {
    case add(Int)
    case startSlowEffect
    case effectDone
  }

  private struct Tally: Equatable, Sendable {
    var total = 0
    var effectsDone = 0
  }

  @Suite("ServiceLifecycle trait: Core and Entities as Services", .timeLimit(.minutes(1)))
  struct ServiceLifecycleTests {
    /// A core whose `.startSlowEffect` runs an effect that sleeps `delay` on
    /// `clock`, then sends `.effectDone`.
    private func makeCore(clock: ManualClock) -> Core<Tally, Step> {
      Core(initialState: Tally(), clock: clock) { tally, step in
        switch step {
        case .add(let amount):
          tally.total += amount
          return .none
        case .startSlowEffect:
          return .run { send in
            try await clock.sleep(for: .seconds(5))
            await send(.effectDone)
          }
        case .effectDone:
          tally.effectsDone += 1
          return .none
        }
      }
    }

    @Test("the group's graceful shutdown shuts the core down gracefully: what was accepted is reduced, effects finish")
    func gracefulShutdown() async throws {
      let clock = ManualClock()
      let core = makeCore(clock: clock)
      try await testGracefulShutdown { trigger in
        let running = Task { try await core.run() }
        for amount in 1...100 { core.send(.add(amount)) }
        core.send(.startSlowEffect)
        try await clock.waitForSleepers(atLeast: 1)  // the effect runs
        trigger.triggerGracefulShutdown()
        // Refused from the trigger on; the effect, still asleep, keeps the
        // shutdown waiting, and what it sends is reduced.
        #expect(core.hasShutDown)
        #expect(core.send(.add(1000)) == .shutDown)
        await clock.advance(by: .seconds(5))
        try await running.value
      }
      #expect(core.hasShutDown)
      #expect(await core.state == Tally(total: 5050, effectsDone: 1))
      #expect(core.send(.add(1)) == .shutDown)
    }

    @Test("cancelling the core's service task shuts it down at once: its effects are cancelled")
    func cancellation() async throws {
      let clock = ManualClock()
      let core = makeCore(clock: clock)
      try await testGracefulShutdown { _ in
        let running = Task { try await core.run() }
        core.send(.add(7))
        core.send(.startSlowEffect)
        try await clock.waitForSleepers(atLeast: 1)
        running.cancel()
        try await running.value
      }
      #expect(core.hasShutDown)
      #expect(await core.state == Tally(total: 7, effectsDone: 0))
      #expect(core.metrics.effectsInFlight == 0)
    }

    @Test("a core is a Service a ServiceGroup runs; the group's graceful shutdown ends it")
    func inAServiceGroup() async throws {
      let core = makeCore(clock: ManualClock())
      let group = ServiceGroup(
        configuration: .init(services: [.init(service: core)], logger: .init(label: "test")))
      try await testGracefulShutdown { trigger in
        let running = Task { try await group.run() }
        try await core.dispatch(.add(3))  // the core takes actions while the group runs
        trigger.triggerGracefulShutdown()
        try await running.value
      }
      #expect(core.hasShutDown)
      #expect(await core.state.total == 3)
    }

    /// A registry whose entities add `.add` amounts.
    private func makeCarts() -> Entities<String, Tally, Step> {
      Entities(
        initialState: { _ in Tally() },
        reducer: Reduce { tally, step in
          if case .add(let amount) = step { tally.total += amount }
        })
    }

    @Test("a registry of entities: the graceful shutdown stores and stops every entity, then run() returns")
    func entities() async throws {
      let carts = makeCarts()
      let observed = try await carts.observe(\Tally.total, of: "ada")
      try await testGracefulShutdown { trigger in
        let running = Task { try await carts.run() }
        for amount in 1...10 { carts.send(.add(amount), to: "ada") }
        trigger.triggerGracefulShutdown()
        try await running.value
      }
      var last: Int?
      for await total in observed { last = total }  // the stream ends at the shutdown
      #expect(last == 55)
      #expect(carts.send(.add(1), to: "ada") == .shutDown)
    }

    @Test("a registry's run() returns once shutdown(), called from elsewhere, has finished")
    func entitiesShutDownDirectly() async throws {
      let carts = makeCarts()
      try await carts.dispatch(.add(2), to: "bob")
      let running = Task { try await carts.run() }
      await carts.shutdown()
      try await running.value
      #expect(carts.metrics.active == 0)
      #expect(carts.metrics.passivations == 1)
    }

    @Test("a registry's service task cancelled: it shuts down the same way")
    func entitiesCancelled() async throws {
      let carts = makeCarts()
      try await carts.dispatch(.add(2), to: "bob")
      let running = Task { try await carts.run() }
      running.cancel()
      try await running.value
      #expect(carts.send(.add(1), to: "bob") == .shutDown)
      #expect(carts.metrics.active == 0)
    }
  }
#endif
