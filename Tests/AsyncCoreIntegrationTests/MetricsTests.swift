#if Metrics
  import AsyncCore
  import AsyncCoreTesting
  import CoreMetrics
  import MetricsTestKit
  import Synchronization
  import Testing

  @Suite("Metrics trait: core and registry metrics through swift-metrics", .timeLimit(.minutes(1)))
  struct MetricsTests {
    @Test("a core's metrics are reported at once and on every interval of its clock, named as Prometheus names them")
    func coreMetrics() async throws {
      let metrics = TestMetrics()
      let clock = ManualClock()
      let core = Core<Int, Int>(initialState: 0, clock: clock) { total, amount in
        total += amount
        return .none
      }
      let dimensions = [("core", "orders")]
      let reporting = Task { await core.reportMetrics(every: .seconds(10), dimensions: dimensions, factory: metrics) }
      try await clock.waitForSleepers(atLeast: 1)  // the first report is made
      #expect(try metrics.expectCounter("asynccore_actions_reduced_total", dimensions).totalValue == 0)
      #expect(try metrics.expectGauge("asynccore_observers", dimensions).lastValue == 0)

      let observer = await core.observe(\.self)
      for amount in 1...5 { try await core.dispatch(amount) }
      await clock.advance(by: .seconds(10))
      try await clock.waitForSleepers(atLeast: 1)  // the second report is made
      #expect(try metrics.expectCounter("asynccore_actions_reduced_total", dimensions).totalValue == 5)
      #expect(try metrics.expectGauge("asynccore_observers", dimensions).lastValue == 1)
      for name in [
        "asynccore_queue_depth", "asynccore_queue_high_water_mark", "asynccore_waiting_senders",
        "asynccore_effects_in_flight",
      ] {
        #expect(try metrics.expectGauge(name, dimensions).values.count == 2, "\(name)")
      }

      for amount in 1...3 { core.send(amount) }
      await core.shutdown()
      await reporting.value  // the last report, once the shutdown ends, without waiting for the interval
      #expect(try metrics.expectCounter("asynccore_actions_reduced_total", dimensions).totalValue == 8)
      #expect(try metrics.expectCounter("asynccore_actions_reduced_total", dimensions).values == [0, 5, 3])
      _ = observer
    }

    @Test("cancelling the reporting task ends it")
    func cancellation() async throws {
      let clock = ManualClock()
      let core = Core<Int, Int>(initialState: 0, clock: clock) { _, _ in .none }
      let reporting = Task { await core.reportMetrics(factory: TestMetrics()) }
      try await clock.waitForSleepers(atLeast: 1)
      reporting.cancel()
      await reporting.value
      #expect(clock.sleeperCount == 0)
      #expect(!core.hasShutDown)
    }

    @Test("a registry's activations and active entities are reported on its clock")
    func registryMetrics() async throws {
      let metrics = TestMetrics()
      let clock = ManualClock()
      let carts = Entities<String, Int, Int>(
        clock: clock, initialState: { _ in 0 }, reducer: Reduce { total, amount in total += amount })
      let reporting = Task { await carts.reportMetrics(every: .seconds(1), factory: metrics) }
      try await clock.waitForSleepers(atLeast: 1)
      #expect(try metrics.expectGauge("asynccore_entities_active").lastValue == 0)
      for id in ["ada", "bob", "cy"] { try await carts.dispatch(1, to: id) }
      await clock.advance(by: .seconds(1))
      try await clock.waitForSleepers(atLeast: 1)
      #expect(try metrics.expectGauge("asynccore_entities_active").lastValue == 3)
      #expect(try metrics.expectCounter("asynccore_entity_activations_total").totalValue == 3)
      for name in [
        "asynccore_entity_passivations_total", "asynccore_entity_activation_failures_total",
        "asynccore_entity_passivation_failures_total",
      ] {
        #expect(try metrics.expectCounter(name).totalValue == 0, "\(name)")
      }
      #expect(try metrics.expectGauge("asynccore_entities_waiting_callers").lastValue == 0)
      await carts.shutdown()
      await reporting.value
      #expect(try metrics.expectGauge("asynccore_entities_active").lastValue == 0)
    }

    @Test(
      "a store that shares its entities has its ownership reported: owned now, and what happened since the last report")
    func ownershipMetrics() async throws {
      let metrics = TestMetrics()
      let clock = ManualClock()
      let store = SharedStore()
      let carts = Entities<String, Int, Int>(
        store: store, clock: clock, initialState: { _ in 0 }, reducer: Reduce { total, amount in total += amount })
      let reporting = Task { await carts.reportMetrics(every: .seconds(1), factory: metrics) }
      try await clock.waitForSleepers(atLeast: 1)
      #expect(try metrics.expectGauge("asynccore_entities_owned").lastValue == 0)
      store.figures.withLock {
        $0 = EntityOwnershipMetrics(owned: 7, ownedElsewhere: 2, handovers: 3, fencingRefusals: 1)
      }
      await clock.advance(by: .seconds(1))
      try await clock.waitForSleepers(atLeast: 1)
      store.figures.withLock {
        $0 = EntityOwnershipMetrics(owned: 4, ownedElsewhere: 5, handovers: 3, fencingRefusals: 1)
      }
      await clock.advance(by: .seconds(1))
      try await clock.waitForSleepers(atLeast: 1)
      #expect(
        carts.metrics.ownership == EntityOwnershipMetrics(owned: 4, ownedElsewhere: 5, handovers: 3, fencingRefusals: 1)
      )
      #expect(try metrics.expectGauge("asynccore_entities_owned").values == [0, 7, 4])
      #expect(try metrics.expectCounter("asynccore_entity_owned_elsewhere_total").values == [0, 2, 3])
      #expect(try metrics.expectCounter("asynccore_entity_handovers_total").totalValue == 3)
      #expect(try metrics.expectCounter("asynccore_entity_fencing_refusals_total").totalValue == 1)
      await carts.shutdown()
      await reporting.value
    }

    @Test("a registry's last report waits for its shutdown to finish: every entity passivated")
    func registryLastReport() async throws {
      let metrics = TestMetrics()
      let clock = ManualClock()
      let effectClock = ManualClock()
      // A positive amount starts an effect, which the entity's shutdown waits for.
      let carts = Entities<String, Int, Int>(
        clock: clock, initialState: { _ in 0 },
        reducer: Reduce { total, amount in
          total += amount
          return amount > 0 ? .run { _ in try await effectClock.sleep(for: .seconds(5)) } : .none
        })
      let reporting = Task { await carts.reportMetrics(every: .seconds(1), factory: metrics) }
      try await clock.waitForSleepers(atLeast: 1)
      try await carts.dispatch(1, to: "ada")
      try await effectClock.waitForSleepers(atLeast: 1)
      let stopping = Task { await carts.shutdown() }
      while carts.send(0, to: "ada") != .shutDown { await Task.yield() }
      // An interval during the shutdown reports, and the reporter goes on.
      await clock.advance(by: .seconds(1))
      try await clock.waitForSleepers(atLeast: 1)
      #expect(try metrics.expectCounter("asynccore_entity_passivations_total").totalValue == 0)
      await effectClock.advance(by: .seconds(5))
      await stopping.value
      await reporting.value
      #expect(try metrics.expectGauge("asynccore_entities_active").lastValue == 0)
      #expect(try metrics.expectCounter("asynccore_entity_passivations_total").totalValue == 1)
    }
  }

  /// A store whose ownership figures the test sets; it holds no entity.
  final class SharedStore: EntityStore {
    struct Unreadable: Error {}
    let figures = Mutex(EntityOwnershipMetrics(owned: 0, ownedElsewhere: 0, handovers: 0, fencingRefusals: 0))
    var ownership: EntityOwnershipMetrics? { figures.withLock { $0 } }
    var syncInterval: Duration? { nil }
    func journal(for id: String) async throws -> any CoreJournal<Int, Int> { throw Unreadable() }
    func sync() async throws {}
    func close() async {}
  }
#endif
