#if ServiceLifecycle
  import ServiceLifecycle
#endif

extension Core {
  /// Ties the core to the calling task, as a service's `run()`: the core's
  /// effects run as child tasks of this call, and cancelling the calling task
  /// shuts the core down immediately (every effect cancelled).
  ///
  /// ```swift
  /// let core = Core(initialState: Feed(), reducer: reduceFeed)
  /// try await withThrowingDiscardingTaskGroup { group in
  ///   group.addTask { try await core.run() }   // until the service is cancelled
  ///   group.addTask { try await serveHTTP(core) }
  /// }
  /// ```
  ///
  /// Returns once the core has shut down, by cancellation or by
  /// ``shutdown(_:)``, and its effects have ended; at once if it already had.
  /// A core nobody calls this on still runs its effects, on a task of its
  /// own; effects started before the call finish there.
  ///
  /// With the `ServiceLifecycle` trait, `Core` is a `Service`, and in a
  /// `ServiceGroup` the group's graceful shutdown (a SIGTERM) is a graceful
  /// ``shutdown(_:)`` of the core, begun before the trigger returns.
  ///
  /// - Throws: ``CoreError/alreadyRunning`` if another `run()` of this core
  ///   is in progress: one core is one service.
  /// - Important: Calling it from inside one of this core's own effects is a
  ///   programmer error (the effect would run until the core stops, so a
  ///   graceful shutdown could never finish): the program stops with a message.
  public nonisolated func run() async throws(CoreError) {
    if !EffectScope.enclosingTokens(in: effects).isEmpty {
      programmerError("run() was called from inside one of this core's own effects; call it from the service's task")
    }
    let consumer: Int
    switch effectQueue.attach(asService: true) {
    case .attached(let id, _): consumer = id
    case .alreadyRunning: throw .alreadyRunning
    case .alreadyConsumed, .stopped: return
    }
    #if ServiceLifecycle
      // In a ServiceGroup, the group's graceful shutdown is the core's.
      await withGracefulShutdownHandler {
        await runEffectJobs(from: effectQueue, as: consumer)
      } onGracefulShutdown: {
        // The gates close before the trigger returns; the stop follows.
        let action = self.lifecycle.shutdown(.graceful)
        self.mailbox.refuseWaiters()
        Task { await self.stop(cancellingEffects: action == .cancelEffects) }
      }
    #else
      await runEffectJobs(from: effectQueue, as: consumer)
    #endif
    if Task.isCancelled { await shutdown(.immediate) }
  }

  /// Waits until the core is idle: every action sent has been reduced and
  /// no effect is in flight.
  ///
  /// ```swift
  /// core.send(.refreshAll)
  /// try await core.waitUntilIdle()
  /// #expect(await core.state.isLoaded)
  /// ```
  ///
  /// An effect that never ends keeps the core from being idle. Returns at
  /// once if the core is idle, even when the waiting task is cancelled.
  ///
  /// - Throws: `CancellationError` if the waiting task was cancelled before
  ///   the core became idle: the caller gave up; nothing was stopped.
  /// - Important: Called from inside one of this core's effects, it does
  ///   not wait for that effect (nor the effects it is nested in): it
  ///   returns once every other effect has ended or is itself waiting on
  ///   the core. The same holds for a task that effect started with `Task {}`,
  ///   which inherits the effect's task-local context; a `Task.detached` does
  ///   not, so an effect that awaits a detached task making this call waits
  ///   for itself and never returns.
  public func waitUntilIdle() async throws(CancellationError) {
    guard await settle(cancellable: true) else { throw CancellationError() }
  }

  /// Stops the core: refuses new actions, deals with effects as `mode` says,
  /// then ends every observer's loop after its final value.
  ///
  /// ```swift
  /// await core.shutdown()              // let effects finish
  /// await core.shutdown(.immediate)    // cancel them
  /// core.send(.increment)              // .shutDown: not accepted
  /// try await core.dispatch(.increment) // throws CoreError.shutDown
  /// ```
  ///
  /// From the instant of the call, before it reaches the core, `send` returns
  /// ``SendResult/shutDown`` and `dispatch` and ``enqueue(_:)`` throw, for
  /// every task, senders waiting for room included; ``hasShutDown`` is
  /// `true`. Actions accepted before the call are reduced.
  ///
  /// - ``ShutdownMode/graceful``: effects run to their end and what they send
  ///   is reduced. An effect that never ends keeps the call waiting: cancel it
  ///   first, or use `.immediate`.
  /// - ``ShutdownMode/immediate``: effects are cancelled and what they send is
  ///   refused (their `send` returns ``SendResult/shutDown``). Effects that
  ///   the last reduced actions return are not started; each is reported to
  ///   the diagnostics handler as an ``EffectFailure`` with
  ///   ``CoreDiagnostic/effectRefused``.
  ///
  /// Returns once every effect has ended. Any number of calls may overlap;
  /// each returns once the core has stopped, and `.immediate` hurries a
  /// graceful one in progress.
  ///
  /// - Important: Called from inside one of this core's effects (a "quit"
  ///   command, a fatal-error path), it does not wait for that effect nor the
  ///   effects it is nested in. Gracefully, that effect is not cancelled and
  ///   goes on after the call returns, but what it sends is refused, and its
  ///   parts that need a task of their own and have not started (a later
  ///   `.merge` of `.run`s in a `.concatenate`) are not started but reported
  ///   to the diagnostics handler; with
  ///   `.immediate` it is cancelled like the others. A later call from
  ///   outside returns once it has ended too. A `Task {}` the effect started
  ///   counts as the effect; a `Task.detached` does not (see
  ///   ``waitUntilIdle()``).
  public nonisolated func shutdown(_ mode: ShutdownMode = .graceful) async {
    // The gates close here, before the hop to the core.
    let action = lifecycle.shutdown(mode)
    // Senders waiting for room are refused now, with the gates.
    mailbox.refuseWaiters()
    await stop(cancellingEffects: action == .cancelEffects)
  }

  private func stop(cancellingEffects: Bool) async {
    if cancellingEffects {
      // Actions accepted before the call are reduced; the effects they
      // return are refused and reported.
      flushMailbox()
      effects.cancelAll()
      // Jobs still queued must be taken to be accounted for; if nobody
      // consumes the queue (a cancelled `run()`), start a runner.
      startEffectRunner()
    }
    // Not cancellable: a cancelled `run()` relies on this to finish.
    await settle(cancellable: false)
    guard lifecycle.stop() else {
      await closeJournal(first: false)
      return
    }
    // Accepted before the gates closed, by an effect the stop does not wait
    // for: reduced, and published to the observers before they end.
    await catchUpQueued()
    for job in effectQueue.stop() { job.abandon() }
    finishObservers()
    removeAllMiddleware()
    await closeJournal(first: true)
    lifecycle.finishSignal()
  }

  /// Waits until the mailbox is empty and no effect is in flight. From
  /// inside one of the core's effects, the caller's own enclosing effects
  /// are not waited for, nor effects that are themselves waiting on the core
  /// from inside (two such callers must not wait for each other).
  ///
  /// Returns `true` once settled; `false` if, `cancellable`, the waiting
  /// task was cancelled first.
  @discardableResult
  func settle(cancellable: Bool) async -> Bool {
    let waiting = effects.beginWaiting()
    defer { effects.endWaiting(waiting) }
    let fromInside = !waiting.isEmpty
    while true {
      await catchUpQueued()
      if effects.isSettled(fromInside: fromInside) {
        // An effect's last follow-up is queued before the effect counts as
        // finished, so a settled registry may leave actions in the mailbox.
        if !mailbox.hasPending { return true }
        continue
      }
      // Checked before waiting: a cancelled task's wait returns at once.
      if cancellable && Task.isCancelled { return false }
      await effects.waitUntilSettled(fromInside: fromInside, cancellable: cancellable)
    }
  }
}
