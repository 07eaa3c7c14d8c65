import AsyncCore
import Testing

/// A core for tests: sends actions, checks how each one changed the state,
/// and asserts, in order, the actions its effects send back, failing the
/// test on anything it did not expect.
///
/// ```swift
/// @Test func countsBySteps() async {
///   let store = TestCore(initialState: Counter(), reducer: counterReducer)
///   await store.send(.setStep(5)) { $0.step = 5 }
///   await store.send(.increment) { $0.count = 5 }
///   await store.send(.load) { $0.isLoading = true }
///   await store.receive(.loaded(42)) {
///     $0.isLoading = false
///     $0.count = 42
///   }
///   await store.finish()
/// }
/// ```
///
/// A `send` or `receive` `assert:` closure mutates the state before the
/// action into the state the test expects after it; a difference is
/// recorded as an issue at the call, field by field. The test core wraps a
/// real `Core` with the same reducer and clock, so effects run as they do in
/// the app.
///
/// - Important: Exhaustive by default (``Exhaustivity/on``): actions effects
///   sent that nobody received, state changes nobody asserted, and effects
///   still running are recorded as issues at ``finish(timeout:sourceLocation:)``
///   and when the test core goes away, each at the `send` it came from. The
///   check when it goes away cannot wait, so an effect that is just ending
///   then counts as running: end tests that start effects with
///   `await store.finish()`, which waits for them (within a bound). A test
///   core that goes away outside the test that made it (released by a task
///   that outlived the test) still reports to that test, once
///   (``TestCoreFailure/outlivedTest(_:test:madeAt:)``).
///
/// Every wait has a bound (``timeout``, one second of real time by
/// default): a test never hangs on an effect that never ends. See
/// ``TestCoreFailure`` for every message.
public final class TestCore<State: Equatable & Sendable, Action: Sendable> {
  /// How much the test core checks; see ``Exhaustivity``.
  ///
  /// ```swift
  /// store.exhaustivity = .off   // from here on, only what the test names
  /// ```
  public var exhaustivity: Exhaustivity

  /// How long `receive`, `finish()`, `cancelInFlightEffects()` and the
  /// handles `send` returns wait, in real time, unless a call passes its
  /// own: a bound, never a delay. A wait ends as soon as what it waits for
  /// happens.
  ///
  /// ```swift
  /// store.timeout = .seconds(5)   // a slow worker under a sanitizer
  /// ```
  public var timeout: Duration

  /// The state after the last action the test core has taken in: the one
  /// its last `send` or `receive` checked, or a later one it skipped to.
  ///
  /// ```swift
  /// await store.send(.increment) { $0.count = 1 }
  /// #expect(store.state.count == 1)
  /// ```
  ///
  /// Inside a `send` or `receive` `assert:` closure it is still the state
  /// before that action (the closure's own argument starts as it too); once
  /// the call returns, the state after it.
  ///
  /// ```swift
  /// await store.send(.increment) {
  ///   #expect(store.state.count == 0)   // not yet changed
  ///   $0.count = 1
  /// }
  /// #expect(store.state.count == 1)
  /// ```
  public internal(set) var state: State

  let core: Core<State, TestAction<Action>>
  let log: ActionLog<State, Action>
  /// How many of the log's records the test core has taken in.
  var cursor = 0
  /// Records of actions effects sent, taken in and not asserted yet, in
  /// the order they were reduced.
  var inbox: [Record<State, Action>] = []
  /// Every `send`, by its number.
  var origins: [Origin] = []
  /// The `send`s whose effects may still be running, oldest first (pruned
  /// as they end): `receive` waits while any runs.
  var inFlight: [Int] = []
  /// The `send`s in flight that ``skipInFlightEffects(sourceLocation:)``
  /// stopped tracking: not waited for by `finish()`, not reported, still
  /// received from.
  var untracked: Set<Int> = []
  /// Where the test core was last called: where effect errors found when
  /// it goes away are recorded.
  var lastSourceLocation: SourceLocation?
  /// The test that made the test core (`nil` outside any test), and where.
  let madeIn: Test?
  let madeAt: SourceLocation
  /// Records what the test core leaves if it goes away outside `madeIn`.
  let reporter: LeftoverReporter
  /// While the test core goes away: the failures found, to record at once
  /// or through `reporter`.
  var collected: [(failure: TestCoreFailure, sourceLocation: SourceLocation?)]?

  /// Creates a test core holding `initialState` and reducing with
  /// `reducer`, whose effects read time from `clock`.
  ///
  /// ```swift
  /// let clock = ManualClock()
  /// let store = TestCore(initialState: Timer(), clock: clock, reducer: timerReducer)
  /// await store.send(.counter(.increment)) { $0.counter.count = 1 }
  /// ```
  ///
  /// - Parameters:
  ///   - initialState: The state the test starts from; ``state`` until the
  ///     first `send`.
  ///   - dependencies: What effects read through `send.dependencies`: the
  ///     fakes this test gives the feature's workers.
  ///   - clock: What effects read through `send.clock`; pass a
  ///     `ManualClock` to drive time from the test.
  ///   - exhaustivity: ``Exhaustivity/on`` (the default) or ``Exhaustivity/off``.
  ///   - timeout: The bound on every wait, in real time; see ``timeout``.
  ///   - sourceLocation: Where the test core is made, as a report from a
  ///     test core that outlived its test names it; leave the default.
  ///   - reducer: The feature's reducer, as the app's `Core` runs it.
  public init(
    initialState: State,
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    exhaustivity: Exhaustivity = .on,
    timeout: Duration = .seconds(1),
    sourceLocation: SourceLocation = #_sourceLocation,
    reducer: Reduce<State, Action>
  ) {
    let log = ActionLog<State, Action>()
    self.log = log
    self.state = initialState
    self.exhaustivity = exhaustivity
    self.timeout = timeout
    self.madeIn = Test.current
    self.madeAt = sourceLocation
    self.reporter = LeftoverReporter()
    self.core = Core(
      initialState: initialState,
      dependencies: dependencies,
      clock: clock,
      diagnostics: { failure in log.append(failure) },
      reducer: TestAction.reducer(reducer, log: log)
    )
  }

  /// Creates a test core reducing with the closure `reducer`, which returns
  /// the effects to run: the same as passing `Reduce(reducer)`.
  ///
  /// ```swift
  /// let store = TestCore(initialState: Counter()) { state, action in
  ///   if case .increment = action { state.count += 1 }
  ///   return .none
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - initialState: The state the test starts from.
  ///   - dependencies: What effects read through `send.dependencies`.
  ///   - clock: What effects read through `send.clock`.
  ///   - exhaustivity: ``Exhaustivity/on`` (the default) or ``Exhaustivity/off``.
  ///   - timeout: The bound on every wait, in real time; see ``timeout``.
  ///   - sourceLocation: Where the test core is made; leave the default.
  ///   - reducer: The feature's reducer, as the app's `Core` runs it.
  public convenience init(
    initialState: State,
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    exhaustivity: Exhaustivity = .on,
    timeout: Duration = .seconds(1),
    sourceLocation: SourceLocation = #_sourceLocation,
    reducer: @escaping @Sendable (_ state: inout State, _ action: Action) -> Effect<Action>
  ) {
    self.init(
      initialState: initialState, dependencies: dependencies, clock: clock, exhaustivity: exhaustivity,
      timeout: timeout, sourceLocation: sourceLocation, reducer: Reduce(reducer))
  }

  /// Replaces dependencies midway: effects started from now on see the new
  /// ones; effects already running keep theirs.
  ///
  /// ```swift
  /// await store.updateDependencies { $0.codeVerifier = .unreachable }
  /// await store.send(.codeEntered("424242")) { $0.isVerifying = true }
  /// ```
  public nonisolated(nonsending) func updateDependencies(_ update: sending (inout Dependencies) -> Void) async {
    await core.updateDependencies(update)
  }

  deinit {
    // Nothing can be awaited here: what is in the log now is what is
    // reported. Releasing the inner core then cancels every effect still
    // running.
    collected = []
    reportEffectFailures(at: lastSourceLocation)
    if exhaustivity == .on {
      takeInRecords()
      reportUnassertedActions()
      for number in trackedInFlight() {
        record(
          .effectStillRunning(origin: origins[number].description, waited: nil), at: origins[number].sourceLocation)
      }
    }
    let found = collected ?? []
    if let madeIn, Test.current?.id != madeIn.id {
      // Released outside its test: recorded by the reporter, in that
      // test's context (see `LeftoverReporter`).
      let test = madeIn.displayName ?? madeIn.name
      let place = "\(madeAt.fileName):\(madeAt.line)"
      reporter.deliver(
        found.map {
          LeftoverReporter.Report(
            message: TestCoreFailure.outlivedTest($0.failure, test: test, madeAt: place).description,
            sourceLocation: $0.sourceLocation)
        })
    } else {
      // In the test that made it (or it was made outside any test):
      // recorded now, synchronously, so before the test can end.
      reporter.deliver([])
      for (failure, sourceLocation) in found {
        Self.record(failure.description, at: sourceLocation)
      }
    }
  }

  // MARK: - Shared by the checks

  /// Moves the records the log gained into the inbox (the test's own sent
  /// records included: `send` takes its own out at once).
  func takeInRecords() {
    let records = log.records(from: cursor)
    cursor += records.count
    inbox += records
  }

  /// Records `failure` as an issue at `sourceLocation` (collects it while
  /// the test core goes away).
  func record(_ failure: TestCoreFailure, at sourceLocation: SourceLocation?) {
    if collected != nil {
      collected?.append((failure, sourceLocation))
    } else {
      Self.record(failure.description, at: sourceLocation)
    }
  }

  private static func record(_ message: String, at sourceLocation: SourceLocation?) {
    if let sourceLocation {
      Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    } else {
      Issue.record(Comment(rawValue: message))
    }
  }

  /// Records the errors effects threw with no `catch:` handler.
  func reportEffectFailures(at sourceLocation: SourceLocation?) {
    for failure in log.takeFailures() {
      let place = "\(failure.fileID):\(failure.line)"
      switch failure.error as? CoreDiagnostic {
      case .childNotFound(let child, let action)?:
        record(.childNotFound(action: ValueRendering.value(action), child: child, placedAt: place), at: sourceLocation)
      case .duplicateID(let id, let collection)?:
        record(.duplicateID(id: id, collection: collection, forEachAt: place), at: sourceLocation)
      case .sendRefused(let action, let startedBy, let reason)?:
        // A cancelled effect that still sends is a race the app meets too
        // (and the test core cancels effects itself): not a failure. A
        // `Send` used after its effect ended is a bug.
        guard reason == .effectEnded else { continue }
        record(
          .sentAfterEffectEnded(
            action: ValueRendering.value(TestAction<Action>.userAction(action)),
            startedBy: ValueRendering.value(TestAction<Action>.userAction(startedBy)), madeAt: place),
          at: sourceLocation)
      case .effectRefused?:
        // An effect not started because shutdown(.immediate) began: named
        // by the error the test's own calls get from a stopped core.
        record(.effectThrew(error: ValueRendering.error(CoreError.shutDown), madeAt: place), at: sourceLocation)
      case nil, .notJournaled?, .journalFailed?, .snapshotFailed?, .syncFailed?, .activationFailed?, .notActivated?,
        .passivationFailed?:
        // A test core has no journal nor registry; the rest is what an effect threw.
        record(.effectThrew(error: ValueRendering.error(failure.error), madeAt: place), at: sourceLocation)
      }
    }
  }

  /// Exhaustive mode: records each action in the inbox as not asserted,
  /// and their state change, then takes the state they left.
  func reportUnassertedActions() {
    guard let first = inbox.first, let last = inbox.last else { return }
    for record in inbox {
      let origin = origins[record.origin]
      self.record(
        .actionNotAsserted(action: ValueRendering.value(record.action), origin: origin.description),
        at: origin.sourceLocation)
    }
    if first.stateBefore != last.stateAfter, let changing = inbox.first(where: { $0.stateBefore != $0.stateAfter }) {
      let origin = origins[changing.origin]
      record(
        .stateChangeNotAsserted(
          origin: origin.description,
          differences: StateDifference.between(expected: first.stateBefore, actual: last.stateAfter)),
        at: origin.sourceLocation)
    }
    skipInbox()
  }

  /// Takes the state the inbox's actions left, and empties it.
  func skipInbox() {
    if let last = inbox.last { state = last.stateAfter }
    inbox.removeAll()
  }

  /// The `send`s whose effects are still running, tracked or not,
  /// forgetting the others.
  func unfinishedOrigins() -> [Int] {
    inFlight.removeAll { origins[$0].effects.isFinished }
    untracked.formIntersection(inFlight)
    return inFlight
  }

  /// The `send`s whose effects are still running and checked: all but those
  /// ``skipInFlightEffects(sourceLocation:)`` stopped tracking.
  func trackedInFlight() -> [Int] {
    unfinishedOrigins().filter { !untracked.contains($0) }
  }

  /// Checks `record`'s state against the one `update` describes: from the
  /// state before it (exhaustive), or from the state after it, so that only
  /// the fields `update` sets are compared (non-exhaustive). A closure that
  /// matches, where the action changed nothing, describes no change: it is
  /// reported, as TCA's TestStore does, in either mode.
  ///
  /// While `update` runs, ``state`` is the state before the action.
  func check(
    _ record: Record<State, Action>,
    step: String,
    update: ((inout State) throws -> Void)?,
    at sourceLocation: SourceLocation
  ) {
    var expected = exhaustivity == .on ? record.stateBefore : record.stateAfter
    state = record.stateBefore
    defer { state = record.stateAfter }
    guard let update else {
      if expected != record.stateAfter {
        self.record(
          .stateMismatch(
            step: step, differences: StateDifference.between(expected: expected, actual: record.stateAfter)),
          at: sourceLocation)
      }
      return
    }
    do {
      try update(&expected)
    } catch is ExpectationFailedError {
      // A failed `#require`: Swift Testing has recorded it, at its line.
      return
    } catch {
      self.record(.updateThrew(step: step, error: ValueRendering.error(error)), at: sourceLocation)
      return
    }
    if expected != record.stateAfter {
      self.record(
        .stateMismatch(step: step, differences: StateDifference.between(expected: expected, actual: record.stateAfter)),
        at: sourceLocation)
    } else if record.stateBefore == record.stateAfter {
      self.record(.closureChangedNothing, at: sourceLocation)
    }
  }
}
