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
  /// effects still running after `timeout` are cancelled. (A test that
  /// leaves a timer running calls ``skipInFlightEffects(timeout:sourceLocation:)``
  /// first, which stops it at once.) The test core can be used again
  /// afterwards; what came before is settled.
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
    await Waiting.effects(unfinishedOrigins().map { origins[$0].effects }, until: deadline)
    reportEffectFailures(at: sourceLocation)
    let running = unfinishedOrigins()
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
    if !running.isEmpty {
      // Reported (or not asked for): stop them, so nothing outlives the
      // test, and drop what they sent meanwhile.
      await cancelEffects(timeout: timeout)
      takeInRecords()
      skipInbox()
      reportEffectFailures(at: sourceLocation)
    }
    watched.removeAll()
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
  public nonisolated(nonsending) func skipReceivedActions(sourceLocation: SourceLocation = #_sourceLocation) async {
    lastSourceLocation = sourceLocation
    // Reading the state reduces what effects have sent and not been reduced yet.
    _ = await core.state
    reportEffectFailures(at: sourceLocation)
    takeInRecords()
    skipInbox()
  }

  /// Cancels every effect still running and waits for them to end: for a
  /// test that stops checking while effects (a timer, a subscription) would
  /// run on.
  ///
  /// ```swift
  /// await store.send(.startTimer) { $0.isTiming = true }
  /// await store.skipInFlightEffects()
  /// await store.finish()   // nothing left running
  /// ```
  ///
  /// An action an effect sent just before it was cancelled is still reduced
  /// and must be received (or skipped) in exhaustive mode. An effect that
  /// has not ended `timeout` after its cancellation is recorded
  /// (``TestCoreFailure/effectIgnoredCancellation(origin:waited:)``) at this call.
  public nonisolated(nonsending) func skipInFlightEffects(
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
