/// A snapshot of a core's load, for tests and for a service's metrics: its
/// queue, what it has reduced, the senders waiting for room, its effects in
/// flight and its observers.
///
/// ```swift
/// let metrics = core.metrics
/// logger.info("queued: \(metrics.queueDepth) (peak \(metrics.queueHighWaterMark)), reduced: \(metrics.actionsReduced)")
/// ```
///
/// Read with ``Core/metrics``, without waiting for the core: every figure
/// but ``effectsInFlight`` is an atomic load, so reading never holds up
/// the drain nor a sender; ``effectsInFlight`` takes the effect registry's
/// lock for an instant (effects take it as they start and end). Each
/// figure is read on its own and may change as soon as it is read. See <doc:Services> for a service exporting it once a second.
public struct CoreMetrics: Sendable, Hashable {
  /// The actions accepted into the mailbox (by `send`, `enqueue` and
  /// effects) that the core has not yet reported reduced.
  ///
  /// ```swift
  /// if core.metrics.queueDepth > 10_000 { logger.warning("the core is falling behind") }
  /// ```
  ///
  /// An action counts until the batch it was taken in is reduced, so the
  /// figure includes the batch the core is reducing. With a
  /// `mailboxCapacity` it never exceeds the capacity, except through
  /// effects' follow-ups, which are never held back, and a durable core's
  /// dispatches, which count until journaled but are never refused for room.
  public let queueDepth: Int

  /// The largest ``queueDepth`` the core has reached since it was made.
  ///
  /// ```swift
  /// #expect(core.metrics.queueHighWaterMark <= 64)   // a core made with mailboxCapacity: 64
  /// ```
  public let queueHighWaterMark: Int

  /// The actions the core has reduced since it was made: sent, enqueued,
  /// dispatched, and those `.send` effects and effects' `send` returned.
  ///
  /// ```swift
  /// let before = core.metrics.actionsReduced
  /// try await core.dispatch(.increment)
  /// #expect(core.metrics.actionsReduced == before + 1)
  /// ```
  ///
  /// The rate of this figure between two reads is the core's throughput.
  public let actionsReduced: Int

  // The background drain's turns, each at most `Core.drainSlice` actions,
  // for the package's tests and benchmarks: not API, since it counts what
  // an internal constant decides and none of what callers reduce themselves.
  package let drainSlices: Int

  /// The ``Core/enqueue(_:)`` calls waiting for room in a full mailbox.
  ///
  /// ```swift
  /// if core.metrics.waitingSenders > 0 { logger.info("producers are held back") }
  /// ```
  public let waitingSenders: Int

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
  init(
    queueDepth: Int, queueHighWaterMark: Int, actionsReduced: Int, drainSlices: Int, waitingSenders: Int,
    observers: Int, effectsInFlight: Int
  ) {
    self.queueDepth = queueDepth
    self.queueHighWaterMark = queueHighWaterMark
    self.actionsReduced = actionsReduced
    self.drainSlices = drainSlices
    self.waitingSenders = waitingSenders
    self.observers = observers
    self.effectsInFlight = effectsInFlight
  }
}

extension Core {
  /// A snapshot of the core's load (its queue, what it has reduced, waiting
  /// senders, effects in flight and observers), for tests and a service's
  /// metrics; see ``CoreMetrics``.
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
    let queue = mailbox.figures
    return CoreMetrics(
      queueDepth: queue.depth,
      queueHighWaterMark: queue.highWaterMark,
      actionsReduced: reducedCount.load(ordering: .relaxed),
      drainSlices: sliceCount.load(ordering: .relaxed),
      waitingSenders: queue.waiting,
      observers: observerCounter.value.load(ordering: .relaxed),
      effectsInFlight: effects.inFlight)
  }
}
