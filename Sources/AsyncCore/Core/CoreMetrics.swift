/// A snapshot of what a core holds, for tests and for a service's metrics:
/// its registered observers and its effects in flight.
///
/// ```swift
/// let metrics = core.metrics
/// logger.info("observers: \(metrics.observers), effects: \(metrics.effectsInFlight)")
/// ```
///
/// Read with ``Core/metrics``, without waiting for the core: each figure is
/// read on its own, at once, and may change as soon as it is read.
public struct CoreMetrics: Sendable, Hashable {
  // The load figures (queue depth and the like) join these here, so that a
  // service reads one snapshot.
  /// The registered observers of states, selections and actions, and
  /// synchronous subscribers.
  ///
  /// ```swift
  /// consumer.cancel()
  /// await consumer.value
  /// #expect(core.metrics.observers == 0)
  /// ```
  ///
  /// An observer counts from the moment
  /// ``Core/states(removeDuplicates:buffering:)``,
  /// ``Core/observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)``
  /// or ``Core/actions(buffering:)`` returns until its loop ends (or its
  /// stream is released un-iterated) or the core shuts down; a subscriber
  /// from the moment
  /// ``Core/subscribe(to:removeDuplicates:buffering:_:)-(KeyPath<State,Props>Sendable,_,_,_)``
  /// returns until its token is cancelled or released or the core shuts
  /// down. Observers and subscribers made through a ``ScopedCore`` count in
  /// its core's figure.
  public let observers: Int

  /// The effects in flight: started by a reducer and not ended, whether
  /// still queued for their task or running.
  ///
  /// ```swift
  /// try await core.dispatch(.startTimer)
  /// #expect(core.metrics.effectsInFlight == 1)
  /// try await core.dispatch(.stopTimer)
  /// try await core.waitUntilIdle()
  /// #expect(core.metrics.effectsInFlight == 0)
  /// ```
  ///
  /// Each part that needs a task counts once: a `.run`, each `.run` of a
  /// `.merge`, a `.concatenate` with a `.run` in it (plus, while it runs a
  /// `.merge` or `.cancellable` part, that part). `.none`, `.send` and
  /// `.cancel` never count: the core carries them out while reducing. An
  /// effect counts until its operation (and its `catch:` handler) has
  /// returned, including while it is cancelled but has not yet noticed; a
  /// cancelled effect that never started stops counting once the runner
  /// has skipped it. Actions an effect sent and the core has not reduced
  /// yet do not count (``Core/waitUntilIdle()`` waits for those too).
  public let effectsInFlight: Int

  @usableFromInline
  init(observers: Int, effectsInFlight: Int) {
    self.observers = observers
    self.effectsInFlight = effectsInFlight
  }
}

extension Core {
  /// A snapshot of the core's observers and effects in flight, for tests
  /// and a service's metrics; see ``CoreMetrics``.
  ///
  /// ```swift
  /// try await core.dispatch(.refresh)
  /// #expect(core.metrics.effectsInFlight == 1)
  /// ```
  ///
  /// - Important: Read without waiting for the core: it may change as soon
  ///   as it is read. Safe to read from anywhere, synchronous code and a
  ///   task cancellation handler included.
  public nonisolated var metrics: CoreMetrics {
    CoreMetrics(observers: observerCounter.value.load(ordering: .relaxed), effectsInFlight: effects.inFlight)
  }
}
