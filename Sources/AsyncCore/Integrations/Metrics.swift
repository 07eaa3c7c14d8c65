#if Metrics
  import CoreMetrics

  extension Core {
    /// Reports ``metrics`` through swift-metrics now and every `interval` on
    /// the core's clock, until the core's shutdown has finished (a last
    /// report with every accepted action counted, then it returns, without
    /// waiting for the interval) or the calling task is cancelled.
    ///
    /// ```swift
    /// let orders = Core(initialState: Orders(), reducer: reduceOrders)
    /// Task { await orders.reportMetrics(every: .seconds(10), dimensions: [("core", "orders")]) }
    /// ```
    ///
    /// Available with the `Metrics` trait. Named as Prometheus names
    /// metrics: gauges `asynccore_queue_depth`,
    /// `asynccore_queue_high_water_mark`, `asynccore_waiting_senders`,
    /// `asynccore_effects_in_flight` and `asynccore_observers`; the counter
    /// `asynccore_actions_reduced_total`, incremented by what was reduced
    /// since the last report. Give each core's reporter its own
    /// `dimensions` when a process reports more than one. Start one
    /// reporter per core and factory: two with the same dimensions share
    /// the counter, and each adds every increment to it.
    ///
    /// - Parameters:
    ///   - interval: The time between reports, on the core's clock (a
    ///     `ManualClock` drives it in tests). Zero or less is a programmer
    ///     error: the program stops with a message.
    ///   - dimensions: Labels added to every metric.
    ///   - factory: Where the metrics go: the bootstrapped
    ///     `MetricsSystem.factory` unless given.
    public nonisolated func reportMetrics(
      every interval: Duration = .seconds(10), dimensions: [(String, String)] = [],
      factory: any MetricsFactory = MetricsSystem.factory
    ) async {
      let reporter = CoreMetricsReporter(dimensions: dimensions, factory: factory)
      await reportEvery(
        interval, on: clock, until: { await self.lifecycle.waitUntilFinished() },
        report: { reporter.report(self.metrics) })
    }
  }

  extension Entities {
    /// Reports ``metrics`` through swift-metrics now and every `interval` on
    /// the registry's clock, until the registry's shutdown has finished
    /// (every entity passivated and the store closed: a last report, then
    /// it returns) or the calling task is cancelled.
    ///
    /// ```swift
    /// Task { await carts.reportMetrics(every: .seconds(10), dimensions: [("registry", "carts")]) }
    /// ```
    ///
    /// Available with the `Metrics` trait. Gauges `asynccore_entities_active`
    /// and `asynccore_entities_waiting_callers`; counters
    /// `asynccore_entity_activations_total`,
    /// `asynccore_entity_passivations_total`,
    /// `asynccore_entity_activation_failures_total`,
    /// `asynccore_entity_passivation_failures_total` and
    /// `asynccore_entity_activation_seconds_total`, incremented by what
    /// happened since the last report. With a store that shares its
    /// entities (``EntityStore/ownership``), also the gauge
    /// `asynccore_entities_owned` and the counters
    /// `asynccore_entity_owned_elsewhere_total`,
    /// `asynccore_entity_handovers_total` and
    /// `asynccore_entity_fencing_refusals_total`. Each entity's own core is not
    /// reported: report it from `prepare` if you need it. Start one
    /// reporter per registry and factory, as for a core.
    ///
    /// - Parameters:
    ///   - interval: The time between reports, on the registry's clock.
    ///     Zero or less is a programmer error: the program stops with a
    ///     message.
    ///   - dimensions: Labels added to every metric.
    ///   - factory: Where the metrics go: the bootstrapped
    ///     `MetricsSystem.factory` unless given.
    public func reportMetrics(
      every interval: Duration = .seconds(10), dimensions: [(String, String)] = [],
      factory: any MetricsFactory = MetricsSystem.factory
    ) async {
      let reporter = EntitiesMetricsReporter(dimensions: dimensions, factory: factory)
      await reportEvery(
        interval, on: clock, until: { await self.waitUntilFinished() }, report: { reporter.report(self.metrics) })
    }
  }

  /// Calls `report` now, after every `interval` on `clock`, and once more
  /// when `finished` returns `true`; returns then, or on cancellation.
  private func reportEvery(
    _ interval: Duration, on clock: any Clock<Duration>, until finished: @escaping @Sendable () async -> Bool,
    report: () -> Void
  ) async {
    if interval <= .zero { programmerError("reportMetrics(every:) needs a positive interval, not \(interval)") }
    enum Wake { case interval, finished, cancelled }
    while true {
      report()
      let wake = await withTaskGroup(of: Wake.self) { group in
        group.addTask { (try? await clock.sleep(for: interval)) == nil ? .cancelled : .interval }
        group.addTask { await finished() ? .finished : .cancelled }
        defer { group.cancelAll() }
        return await group.next() ?? .cancelled
      }
      switch wake {
      case .interval: continue
      case .finished: report()
      case .cancelled: break
      }
      return
    }
  }

  /// A core's metrics as swift-metrics gauges and a counter, which it
  /// increments by the difference from the last report.
  private final class CoreMetricsReporter {
    private let queueDepth: Gauge
    private let queueHighWaterMark: Gauge
    private let waitingSenders: Gauge
    private let effectsInFlight: Gauge
    private let observers: Gauge
    private let actionsReduced: Counter
    private var reduced = 0

    init(dimensions: [(String, String)], factory: any MetricsFactory) {
      func gauge(_ name: String) -> Gauge { Gauge(label: name, dimensions: dimensions, factory: factory) }
      queueDepth = gauge("asynccore_queue_depth")
      queueHighWaterMark = gauge("asynccore_queue_high_water_mark")
      waitingSenders = gauge("asynccore_waiting_senders")
      effectsInFlight = gauge("asynccore_effects_in_flight")
      observers = gauge("asynccore_observers")
      actionsReduced = Counter(label: "asynccore_actions_reduced_total", dimensions: dimensions, factory: factory)
    }

    func report(_ metrics: CoreMetrics) {
      queueDepth.record(metrics.queueDepth)
      queueHighWaterMark.record(metrics.queueHighWaterMark)
      waitingSenders.record(metrics.waitingSenders)
      effectsInFlight.record(metrics.effectsInFlight)
      observers.record(metrics.observers)
      actionsReduced.increment(by: metrics.actionsReduced - reduced)
      reduced = metrics.actionsReduced
    }
  }

  /// A registry's metrics as swift-metrics gauges and counters.
  private final class EntitiesMetricsReporter {
    private let active: Gauge
    private let waitingCallers: Gauge
    private let activations: Counter
    private let passivations: Counter
    private let activationFailures: Counter
    private let passivationFailures: Counter
    private let activationSeconds: FloatingPointCounter
    private let owned: Gauge
    private let ownedElsewhere: Counter
    private let handovers: Counter
    private let fencingRefusals: Counter
    private var last = EntitiesMetrics(
      active: 0, activations: 0, passivations: 0, activationFailures: 0, passivationFailures: 0,
      activationTime: .zero, waitingCallers: 0, ownership: nil)

    init(dimensions: [(String, String)], factory: any MetricsFactory) {
      func counter(_ name: String) -> Counter { Counter(label: name, dimensions: dimensions, factory: factory) }
      active = Gauge(label: "asynccore_entities_active", dimensions: dimensions, factory: factory)
      waitingCallers = Gauge(label: "asynccore_entities_waiting_callers", dimensions: dimensions, factory: factory)
      activations = counter("asynccore_entity_activations_total")
      passivations = counter("asynccore_entity_passivations_total")
      activationFailures = counter("asynccore_entity_activation_failures_total")
      passivationFailures = counter("asynccore_entity_passivation_failures_total")
      activationSeconds = FloatingPointCounter(
        label: "asynccore_entity_activation_seconds_total", dimensions: dimensions, factory: factory)
      owned = Gauge(label: "asynccore_entities_owned", dimensions: dimensions, factory: factory)
      ownedElsewhere = counter("asynccore_entity_owned_elsewhere_total")
      handovers = counter("asynccore_entity_handovers_total")
      fencingRefusals = counter("asynccore_entity_fencing_refusals_total")
    }

    func report(_ metrics: EntitiesMetrics) {
      active.record(metrics.active)
      waitingCallers.record(metrics.waitingCallers)
      activations.increment(by: metrics.activations - last.activations)
      passivations.increment(by: metrics.passivations - last.passivations)
      activationFailures.increment(by: metrics.activationFailures - last.activationFailures)
      passivationFailures.increment(by: metrics.passivationFailures - last.passivationFailures)
      let seconds = (metrics.activationTime - last.activationTime) / .seconds(1)
      activationSeconds.increment(by: seconds)
      // Only a store that shares its entities reports ownership.
      if let ownership = metrics.ownership {
        let before = last.ownership
        owned.record(ownership.owned)
        ownedElsewhere.increment(by: ownership.ownedElsewhere - (before?.ownedElsewhere ?? 0))
        handovers.increment(by: ownership.handovers - (before?.handovers ?? 0))
        fencingRefusals.increment(by: ownership.fencingRefusals - (before?.fencingRefusals ?? 0))
      }
      last = metrics
    }
  }
#endif
