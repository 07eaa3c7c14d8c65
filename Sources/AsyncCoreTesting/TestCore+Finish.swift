import AsyncCore
import Testing

extension TestCore {
  /// Waits for the effects still running, then, in exhaustive mode, records
  /// what the test left unasserted: each action effects sent that was not
  /// received, the state change they made, and each effect still running
  /// after `timeout` (which is then cancelled).
  ///
  /// ```swift
  /// await store.send(.load) { $0.isLoading = true }
  /// await store.receive(.loaded) { $0.isLoading = false }
  /// await store.finish()   // the load effect has ended; nothing is left
  /// ```
  ///
  /// Each leftover is recorded at the `send` it came from
  /// (``TestCoreFailure/actionNotAsserted(action:origin:)``,
  /// ``TestCoreFailure/stateChangeNotAsserted(origin:differences:)``,
  /// ``TestCoreFailure/effectStillRunning(origin:waited:)``). In
  /// non-exhaustive mode nothing is recorded, but the wait is the same:
  /// effects still running after `timeout` are cancelled.
  ///
  /// Effects that ``skipInFlightEffects(sourceLocation:)`` stopped tracking
  /// are neither waited for nor reported: the actions they sent so far are
  /// checked like any other, then they are cancelled with the rest, so
  /// nothing outlives the test. The test core can be used again afterwards;
  /// what came before is settled.
  ///
  /// - Parameters:
  ///   - timeout: How long to wait for effects, in real time; by default the
  ///     test core's ``timeout``. Returns as soon as they end. Effects
  ///     cancelled after it are given as long again to end, so the call
  ///     returns within twice `timeout`.
  ///   - sourceLocation: Where errors effects threw are recorded (leftovers
  ///     are recorded at the `send` they came from); leave the default.
  public nonisolated(nonsending) func finish(
    timeout: Duration? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    lastSourceLocation = sourceLocation
    let timeout = timeout ?? self.timeout
    let deadline = ContinuousClock.now.advanced(by: timeout)
    await Waiting.effects(trackedInFlight().map { origins[$0].effects }, until: deadline)
    reportEffectFailures(at: sourceLocation)
    let running = trackedInFlight()
    takeInRecords()
    if exhaustivity == .on {
      reportUnassertedActions()
      for number in running {
        record(
          .effectStillRunning(origin: origins[number].description, waited: timeout),
          at: origins[number].sourceLocation)
      }
    }
    skipInbox()
    if !unfinishedOrigins().isEmpty {
      // Reported (or not asked for, or skipped): stop them, so nothing
      // outlives the test, and drop what they sent meanwhile.
      await cancelEffects(timeout: timeout)
      takeInRecords()
      skipInbox()
      reportEffectFailures(at: sourceLocation)
    }
    inFlight.removeAll()
    untracked.removeAll()
  }

  /// Takes every action effects have sent so far as received, unasserted,
  /// and the state they left as the current one.
  ///
  /// ```swift
  /// await store.send(.appeared)
  /// await store.skipReceivedActions()   // the analytics pings it caused
  /// await store.send(.refresh) { $0.isLoading = true }
  /// ```
  ///
  /// "So far" means reduced by the time the call reads the core: actions
  /// an effect sends later are still to be received.
  ///
  /// - Parameters:
  ///   - strict: Whether finding no action to skip is a failure
  ///     (``TestCoreFailure/noReceivedActionsToSkip``), recorded at this
  ///     call, in either mode. Pass `false` where there may be none.
  ///   - sourceLocation: Where a failure is recorded; leave the default.
  public nonisolated(nonsending) func skipReceivedActions(
    strict: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    lastSourceLocation = sourceLocation
    // Reading the state reduces what effects have sent and not been reduced yet.
    _ = await core.state
    reportEffectFailures(at: sourceLocation)
    takeInRecords()
    if strict && inbox.isEmpty {
      record(.noReceivedActionsToSkip, at: sourceLocation)
    }
    skipInbox()
  }

  /// Stops tracking the effects in flight, without cancelling them: for a
  /// test that checks one part of a feature while effects it does not care
  /// about (a timer, a subscription) run on.
  ///
  /// ```swift
  /// await store.send(.startTimer) { $0.isTiming = true }
  /// await store.skipInFlightEffects()          // the timer is not this test's subject
  /// await store.send(.rename("Ada")) { $0.name = "Ada" }
  /// await store.finish()                       // the timer is not reported; it is cancelled
  /// ```
  ///
  /// Those effects run on: what they send is still reduced, and still to be
  /// received (or skipped) in exhaustive mode, as TCA's `TestStore` does.
  /// `receive` waits for them as for any effect. What changes is only that
  /// ``finish(timeout:sourceLocation:)`` does not wait for them or report
  /// them as still running (it cancels them, with whatever else is left),
  /// and neither does the test core when it goes away. Effects started
  /// later are tracked as usual.
  ///
  /// To stop effects, call ``cancelInFlightEffects(timeout:sourceLocation:)``,
  /// or ``TestEffectHandle/cancel(timeout:sourceLocation:)`` for one
  /// `send`'s effects.
  ///
  /// - Parameter sourceLocation: Where errors effects threw are recorded;
  ///   leave the default.
  public nonisolated(nonsending) func skipInFlightEffects(sourceLocation: SourceLocation = #_sourceLocation) async {
    lastSourceLocation = sourceLocation
    untracked.formUnion(unfinishedOrigins())
    reportEffectFailures(at: sourceLocation)
  }

  /// Cancels every effect still running and waits for them to end: for a
  /// test that stops a feature's effects (a timer, a subscription) without
  /// an action of the feature that would.
  ///
  /// ```swift
  /// await store.send(.startTimer) { $0.isTiming = true }
  /// await store.cancelInFlightEffects()
  /// await store.finish()   // nothing left running
  /// ```
  ///
  /// An action an effect sent just before it was cancelled is still reduced
  /// and must be received (or skipped) in exhaustive mode. An effect that
  /// has not ended `timeout` after its cancellation is recorded
  /// (``TestCoreFailure/effectIgnoredCancellation(origin:waited:)``) at this
  /// call. Effects ``skipInFlightEffects(sourceLocation:)`` stopped tracking
  /// are cancelled too.
  ///
  /// - Parameters:
  ///   - timeout: How long to wait, in real time, for the cancelled effects
  ///     to end; by default the test core's ``timeout``. Returns as soon as
  ///     they end.
  ///   - sourceLocation: Where failures are recorded; leave the default.
  public nonisolated(nonsending) func cancelInFlightEffects(
    timeout: Duration? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    lastSourceLocation = sourceLocation
    let timeout = timeout ?? self.timeout
    for number in await cancelEffects(timeout: timeout) {
      record(.effectIgnoredCancellation(origin: origins[number].description, waited: timeout), at: sourceLocation)
    }
    reportEffectFailures(at: sourceLocation)
  }

  /// Cancels every effect, waits up to `timeout` for them to end, and
  /// returns the `send`s whose effects have not.
  @discardableResult
  nonisolated(nonsending) func cancelEffects(timeout: Duration) async -> [Int] {
    let running = unfinishedOrigins()
    guard !running.isEmpty else { return [] }
    do {
      try await core.dispatch(.cancelEffects)
    } catch {
      fatalError("AsyncCoreTesting: internal: the test core's core refused to cancel its effects: \(error)")
    }
    await Waiting.effects(running.map { origins[$0].effects }, until: ContinuousClock.now.advanced(by: timeout))
    return unfinishedOrigins()
  }
}
