extension Core {
  enum Lifecycle {
    case running
    case stopping
    case stopped
  }

  /// Whether the core has finished shutting down: observers registered now
  /// get the final state and end at once.
  @usableFromInline
  var isStopped: Bool { lifecycle == .stopped }

  /// Ties the core to the calling task, as a service's `run()`: the core's
  /// effects run as child tasks of this call, and cancelling the calling task
  /// shuts the core down immediately (every effect cancelled).
  ///
  /// ```swift
  /// let core = Core(initialState: Feed(), reducer: reduceFeed)
  /// try await withThrowingDiscardingTaskGroup { group in
  ///   group.addTask { await core.run() }   // until the service is cancelled
  ///   group.addTask { try await serveHTTP(core) }
  /// }
  /// ```
  ///
  /// Returns once the core has shut down, by cancellation or by
  /// ``shutdown(_:)``. A core nobody calls this on still runs its effects,
  /// on a task of its own; effects started before the call finish there.
  ///
  /// - Important: Call it from one task at a time; a second concurrent call
  ///   is a programmer error (a precondition).
  public nonisolated func run() async {
    guard let consumer = effectQueue.attachService() else { return }
    await runEffectJobs(from: effectQueue, as: consumer)
    if Task.isCancelled { await shutdown(.immediate) }
  }

  /// Waits until the core is idle: every action sent has been reduced and
  /// no effect is in flight.
  ///
  /// ```swift
  /// core.send(.refreshAll)
  /// await core.waitUntilIdle()
  /// #expect(await core.state.isLoaded)
  /// ```
  ///
  /// An effect that never ends keeps the core from being idle; the wait
  /// returns early if the waiting task is cancelled.
  public func waitUntilIdle() async {
    await waitUntilIdle(cancellable: true)
  }

  func waitUntilIdle(cancellable: Bool) async {
    while true {
      flushMailbox()
      if effects.inFlight.isZero {
        // An effect's last follow-up is queued before the effect counts as
        // finished, so a count of zero seen here means it is in the mailbox.
        if mailbox.withLock({ $0.pending.isEmpty }) { return }
        continue
      }
      await effects.inFlight.waitUntilZero(cancellable: cancellable)
      if cancellable && Task.isCancelled { return }
    }
  }

  /// Stops the core: refuses new actions, deals with effects as `mode` says,
  /// then ends every observer's loop after its final value.
  ///
  /// ```swift
  /// await core.shutdown()              // let effects finish
  /// await core.shutdown(.immediate)    // cancel them
  /// core.send(.increment)              // false: not accepted
  /// try await core.dispatch(.increment) // throws CoreError.shutDown
  /// ```
  ///
  /// From the instant of the call, before it reaches the core, `send` returns
  /// `false` and `dispatch` throws; ``hasShutDown`` is `true`. Actions accepted
  /// before the call are reduced. With ``ShutdownMode/graceful`` effects run to
  /// their end and what they send is reduced; with ``ShutdownMode/immediate``
  /// they are cancelled, what they send is refused (their `send` returns
  /// `false`), and effects the last reduced actions return are not started.
  /// Returns once every effect has ended. A call while another is in progress
  /// waits for it; `.immediate` hurries it.
  public nonisolated func shutdown(_ mode: ShutdownMode = .graceful) async {
    acceptsActions.store(false, ordering: .relaxed)
    mailbox.withLock { $0.narrowAcceptance(to: mode == .graceful ? .followUpsOnly : .nothing) }
    await stop(mode)
  }

  private func stop(_ mode: ShutdownMode) async {
    switch lifecycle {
    case .stopped:
      return
    case .stopping:
      if mode == .immediate { stopEffects() }
      await withCheckedContinuation { shutdownWaiters.append($0) }
      return
    case .running:
      break
    }
    lifecycle = .stopping
    if mode == .graceful {
      await waitUntilIdle(cancellable: false)
    }
    stopEffects()
    // Not cancellable: a cancelled `run()` relies on this to finish.
    await effects.inFlight.waitUntilZero(cancellable: false)
    lifecycle = .stopped
    _ = effectQueue.finish()  // nothing is queued: every job has finished
    finishObservers()
    for waiter in shutdownWaiters { waiter.resume() }
    shutdownWaiters = []
  }

  /// Closes the mailbox (reducing what it holds), refuses new effects and
  /// cancels those in flight. Idempotent.
  private func stopEffects() {
    var remaining = takeBatchBuffer()
    emptyMailbox { $0.close(into: &remaining) }
    effects.close()
    let hadRemaining = !remaining.isEmpty
    reduceBatch(&remaining)
    if hadRemaining { publishBatch() }
    effects.cancelAll()
    // Jobs still queued must be taken to be accounted for; if no runner
    // consumes the queue (a cancelled `run()`), start one.
    startEffectRunner()
  }
}
