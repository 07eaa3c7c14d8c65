import AsyncCore

/// Every failure a ``TestCore`` records, with the exact message the test
/// report shows: the messages are part of the API.
///
/// Each is recorded with `Issue.record(_:sourceLocation:)`; the issue's only
/// comment is the failure's ``description``. A test of a helper built on
/// ``TestCore`` can match it exactly:
///
/// ```swift
/// await withKnownIssue {
///   await store.send(.increment) { $0.count = 2 }
/// } matching: { issue in
///   issue.comments.map(\.rawValue) == [
///     TestCoreFailure.stateMismatch(
///       step: "send(.increment)",
///       differences: [StateDifference(path: "count", expected: "2", actual: "1")]
///     ).description
///   ]
/// }
/// ```
///
/// Values are rendered as text, as a test writes them: actions as
/// `.case(payload)`, fields as `"text"`, `nil`, `Child(name: "a")`, errors
/// as `APIError.offline` or `Boom()` (types without their module or the
/// function they are declared in), origins as `send(.action) at File.swift:12`.
/// Each value is cut after 4,096 bytes of UTF-8, and a whole message after
/// 16,384, with a marker saying where: a huge action or error never makes
/// a huge issue. Invisible and control characters in a value are escaped.
public enum TestCoreFailure: Sendable, Hashable, CustomStringConvertible {
  /// The state after an action differs from what the test's closure
  /// described. Recorded at the `send` or `receive`.
  ///
  /// ```
  /// send(.increment) left the state different from the expected one (expected, actual):
  ///   count: 2, 1
  /// ```
  ///
  /// ```swift
  /// await store.send(.increment) { $0.count = 2 }   // the reducer made it 1
  /// // records .stateMismatch(
  /// //   step: "send(.increment)", differences: [StateDifference(path: "count", expected: "2", actual: "1")])
  /// ```
  case stateMismatch(step: String, differences: [StateDifference])

  /// The closure that describes the expected state threw. Recorded at the
  /// `send` or `receive`.
  ///
  /// ```swift
  /// await store.send(.load) { try $0.apply(fixture) }   // apply threw FixtureError.missing
  /// // records .updateThrew(step: "send(.load)", error: "FixtureError.missing")
  /// ```
  case updateThrew(step: String, error: String)

  /// A `send` or `receive` was given an `assert:` closure, but the action
  /// left the state as it was, and so does the closure: a closure there
  /// says a change is expected. Recorded at the `send` or `receive`, in
  /// either mode (non-exhaustive too, when the closure is given: the action
  /// changed nothing).
  ///
  /// ```
  /// expected the state to change, but the closure left it as it was; leave out the closure when no change is expected
  /// ```
  ///
  /// ```swift
  /// await store.send(.noop) { $0.count = $0.count }   // .noop changes nothing
  /// // records .closureChangedNothing
  /// await store.send(.noop)                           // passes: no closure, no change expected
  /// ```
  case closureChangedNothing

  /// Exhaustive mode: the next action effects sent is not the one the
  /// `receive` names. Recorded at the `receive`; that action counts as
  /// received.
  ///
  /// ```swift
  /// await store.send(.load) { $0.isLoading = true }
  /// await store.receive(.loaded(7)) { $0.isLoading = false }   // the effect sent .loaded(42)
  /// // records .unexpectedAction(expected: ".loaded(7)", received: ".loaded(42)")
  /// ```
  case unexpectedAction(expected: String, received: String)

  /// No action matching the `receive` arrived: none was sent while effects
  /// ran for `timeout`, or no effect is in flight to send one
  /// (`inFlight` is then empty and the `receive` fails at once).
  /// `skipped` lists the actions passed over while looking (non-exhaustive
  /// mode only). Recorded at the `receive`.
  ///
  /// ```swift
  /// await store.send(.startTimer) { $0.isTiming = true }   // at TimerTests.swift:12
  /// await store.receive(.tick)                             // the clock was never advanced
  /// // records .actionNotReceived(
  /// //   expected: ".tick", timeout: .seconds(1), skipped: [], inFlight: ["send(.startTimer) at TimerTests.swift:12"])
  /// ```
  case actionNotReceived(expected: String, timeout: Duration, skipped: [String], inFlight: [String])

  /// Exhaustive mode: the test sent an action while actions effects had
  /// sent before it were not asserted. They count as skipped. Recorded at
  /// the `send`.
  ///
  /// ```swift
  /// await store.send(.echo(5))                  // its effect sends .echoed(5)
  /// await store.send(.reset) { $0.count = 0 }   // before receiving it
  /// // records .actionsNotReceivedBeforeSend(step: "send(.reset)", received: [".echoed(5)"])
  /// ```
  case actionsNotReceivedBeforeSend(step: String, received: [String])

  /// Exhaustive mode, at ``TestCore/finish(timeout:sourceLocation:)`` or
  /// when the test core goes away: an action an effect sent was never
  /// asserted. Recorded at the `send` it descends from.
  ///
  /// ```swift
  /// await store.send(.echo(5))   // at EchoTests.swift:12; its effect sends .echoed(5)
  /// await store.finish()         // nobody received it
  /// // records .actionNotAsserted(action: ".echoed(5)", origin: "send(.echo(5)) at EchoTests.swift:12")
  /// ```
  case actionNotAsserted(action: String, origin: String)

  /// Exhaustive mode, at `finish()` or when the test core goes away: the
  /// actions nobody asserted changed the state. `differences` compare the
  /// state last asserted (expected) with the state now (actual). Recorded
  /// at the `send` the first changing action descends from.
  ///
  /// ```swift
  /// await store.send(.echo(5))   // at EchoTests.swift:12; its effect's .echoed(5) sets the count to 5
  /// await store.finish()
  /// // records .stateChangeNotAsserted(
  /// //   origin: "send(.echo(5)) at EchoTests.swift:12",
  /// //   differences: [StateDifference(path: "count", expected: "0", actual: "5")])
  /// ```
  case stateChangeNotAsserted(origin: String, differences: [StateDifference])

  /// Exhaustive mode: an effect was still running at `finish()` after
  /// waiting `waited` (it was then cancelled), or when the test core went
  /// away (`waited` is `nil`; going away cancels it). Recorded at the
  /// `send` it descends from.
  ///
  /// ```swift
  /// await store.send(.startTimer) { $0.isTiming = true }   // at TimerTests.swift:12; never ends
  /// await store.finish()
  /// // records .effectStillRunning(origin: "send(.startTimer) at TimerTests.swift:12", waited: .seconds(1))
  /// ```
  case effectStillRunning(origin: String, waited: Duration?)

  /// ``TestCore/cancelInFlightEffects(timeout:sourceLocation:)`` or
  /// ``TestEffectHandle/cancel(timeout:sourceLocation:)`` cancelled an
  /// effect that had not ended `waited` later: it ignores cancellation.
  /// Recorded at that call.
  ///
  /// ```swift
  /// await store.send(.wait)              // at WaitTests.swift:12; its effect ignores cancellation
  /// await store.cancelInFlightEffects()
  /// // records .effectIgnoredCancellation(origin: "send(.wait) at WaitTests.swift:12", waited: .seconds(1))
  /// ```
  case effectIgnoredCancellation(origin: String, waited: Duration)

  /// ``TestEffectHandle/finish(timeout:sourceLocation:)``: the effects of
  /// one `send` had not ended after waiting `waited`. They go on running.
  /// Recorded at the `finish(timeout:)` call.
  ///
  /// ```swift
  /// let timer = await store.send(.startTimer)   // at TimerTests.swift:12; ticks until stopped
  /// await timer.finish()
  /// // records .effectsNotFinished(origin: "send(.startTimer) at TimerTests.swift:12", waited: .seconds(1))
  /// ```
  case effectsNotFinished(origin: String, waited: Duration)

  /// ``TestCore/skipReceivedActions(strict:sourceLocation:)``, strict (the
  /// default), found no received action to skip. Recorded at the call.
  ///
  /// ```swift
  /// await store.send(.increment) { $0.count = 1 }   // starts no effect
  /// await store.skipReceivedActions()
  /// // records .noReceivedActionsToSkip
  /// await store.skipReceivedActions(strict: false)  // passes: there may be none
  /// ```
  case noReceivedActionsToSkip

  /// An effect threw an error and has no `catch:` handler. Recorded, in
  /// every mode, at the test core call that found it.
  ///
  /// ```swift
  /// await store.send(.load) { $0.isLoading = true }   // its effect throws APIError.offline, with no catch:
  /// await store.finish()
  /// // records .effectThrew(error: "APIError.offline", madeAt: "App/Feature.swift:40")
  /// ```
  case effectThrew(error: String, madeAt: String)

  /// An effect sent an action after it had ended, through a `Send` it
  /// kept or handed to a `Task {}`: the core refused the action, so it was
  /// never reduced. Recorded, in every mode, at the test core call that
  /// found it. (An action a *cancelled* effect sends is refused too, and is
  /// not recorded: cancellation races are expected, as in the app.)
  ///
  /// ```
  /// the effect of .refresh sent .loaded(3) after it ended (a Send is valid only while its
  /// effect runs); it was not reduced (the effect made at App/Feature.swift:40)
  /// ```
  ///
  /// ```swift
  /// await store.send(.refresh)   // its effect hands `send` to a Task {} and returns
  /// await store.finish()
  /// // records .sentAfterEffectEnded(action: ".loaded(3)", startedBy: ".refresh", madeAt: "App/Feature.swift:40")
  /// ```
  case sentAfterEffectEnded(action: String, startedBy: String, madeAt: String)

  /// An action left two elements of a `forEach`'s collection with one id:
  /// actions for that id reach the first. Recorded, in every
  /// mode, at the test core call that found it.
  ///
  /// ```
  /// more than one element of \Todos.rows has the id 3: actions for it reach the first
  /// (the forEach at App/Todos.swift:40)
  /// ```
  ///
  /// ```swift
  /// await store.send(.add(Todo(id: 3))) { $0.rows.append(Todo(id: 3)) }   // a row 3 is there already
  /// // records .duplicateID(id: "3", collection: "\\Todos.rows", forEachAt: "App/Todos.swift:40")
  /// ```
  case duplicateID(id: String, collection: String, forEachAt: String)

  /// A composed reducer (`ifLet`, `forEach`) got an action for a child that
  /// is no longer in the state; the child did not reduce it. Recorded, in
  /// every mode, at the test core call that found it.
  ///
  /// ```
  /// an action for \Todos.rows[id: 3], which is not in the state, was not reduced:
  /// .row(id: 3, action: .toggle) (the child placed at App/Todos.swift:40)
  /// ```
  ///
  /// ```swift
  /// await store.send(.row(id: 3, action: .toggle))   // there is no row 3
  /// // records .childNotFound(
  /// //   action: ".row(id: 3, action: .toggle)", child: "\\Todos.rows[id: 3]", placedAt: "App/Todos.swift:40")
  /// ```
  case childNotFound(action: String, child: String, placedAt: String)

  /// A test core went away outside the test that made it (a task that
  /// outlived the test released it): `failure` is what it left. Recorded
  /// once, in the context of the test that made it, at the place `failure`
  /// belongs to. `test` is that test's name, `madeAt` where the test core
  /// was made.
  ///
  /// ```swift
  /// let store = TestCore(initialState: Model(), clock: clock, reducer: reduce)   // at TimerTests.swift:10
  /// await store.send(.startTimer)                                            // at TimerTests.swift:11
  /// Task.detached { [store] in _ = store }   // released there, after the test
  /// // records .outlivedTest(
  /// //   .effectStillRunning(origin: "send(.startTimer) at TimerTests.swift:11", waited: nil),
  /// //   test: "the timer ticks", madeAt: "TimerTests.swift:10")
  /// ```
  ///
  /// If the test has ended by then, its result has been reported already:
  /// Swift Testing shows the issue under the test's name, after it, and
  /// fails the run.
  indirect case outlivedTest(_ failure: TestCoreFailure, test: String, madeAt: String)

  /// The message the test report shows, as listed in the Testing article.
  ///
  /// ```swift
  /// TestCoreFailure.unexpectedAction(expected: ".loaded(7)", received: ".loaded(42)").description
  /// // "expected to receive .loaded(7), but the next action effects sent was .loaded(42)"
  /// ```
  ///
  /// A message longer than 16,384 bytes of UTF-8 is cut there, with a marker.
  public var description: String {
    ValueRendering.bounded(text, to: ValueRendering.maximumMessageLength)
  }

  private var text: String {
    switch self {
    case .stateMismatch(let step, let differences):
      return "\(step) left the state different from the expected one (expected, actual):"
        + StateDifference.lines(differences)
    case .updateThrew(let step, let error):
      return "the closure describing the state after \(step) threw \(error)"
    case .closureChangedNothing:
      return "expected the state to change, but the closure left it as it was; "
        + "leave out the closure when no change is expected"
    case .unexpectedAction(let expected, let received):
      return "expected to receive \(expected), but the next action effects sent was \(received)"
    case .actionNotReceived(let expected, let timeout, let skipped, let inFlight):
      let passed = skipped.isEmpty ? "" : "; passed over: " + skipped.joined(separator: ", ")
      if inFlight.isEmpty {
        return "expected to receive \(expected), but no effect is in flight to send it\(passed)"
      }
      return "expected to receive \(expected), but none arrived within \(timeout)\(passed); "
        + "effects still in flight, started by: " + inFlight.joined(separator: "; ")
    case .actionsNotReceivedBeforeSend(let step, let received):
      return "\(step) was sent before these received actions were asserted: "
        + received.joined(separator: ", ") + " (receive them first, or call skipReceivedActions())"
    case .actionNotAsserted(let action, let origin):
      return "\(action) was received from an effect of \(origin), but never asserted "
        + "(receive it, or call skipReceivedActions())"
    case .stateChangeNotAsserted(let origin, let differences):
      return "actions nobody asserted, from effects of \(origin), changed the state (asserted, now):"
        + StateDifference.lines(differences)
    case .effectStillRunning(let origin, let waited?):
      return "an effect started by \(origin) was still running after \(waited), and was cancelled "
        + "(end it in the test, or call skipInFlightEffects())"
    case .effectStillRunning(let origin, nil):
      return "an effect started by \(origin) was still running when the test core went away "
        + "(end it in the test, or call skipInFlightEffects(); await finish() waits for effects)"
    case .effectIgnoredCancellation(let origin, let waited):
      return "an effect started by \(origin) was cancelled but had not ended after \(waited)"
    case .effectsNotFinished(let origin, let waited):
      return "expected the effects of \(origin) to finish, but they were still running after \(waited)"
    case .noReceivedActionsToSkip:
      return "there were no received actions to skip (pass strict: false when there may be none)"
    case .effectThrew(let error, let madeAt):
      return "the effect made at \(madeAt) threw, and has no catch handler: \(error)"
    case .sentAfterEffectEnded(let action, let startedBy, let madeAt):
      return "the effect of \(startedBy) sent \(action) after it ended (a Send is valid only while its effect "
        + "runs); it was not reduced (the effect made at \(madeAt))"
    case .duplicateID(let id, let collection, let forEachAt):
      return "more than one element of \(collection) has the id \(id): actions for it reach the first "
        + "(the forEach at \(forEachAt))"
    case .childNotFound(let action, let child, let placedAt):
      return "an action for \(child), which is not in the state, was not reduced: \(action) "
        + "(the child placed at \(placedAt))"
    case .outlivedTest(let failure, let test, let madeAt):
      return "\(failure.description) (found when the test core went away outside the test that made it, "
        + "\"\(test)\", at \(madeAt))"
    }
  }
}

/// One difference between an expected and an actual state: a field, by its
/// path from the state (`login.isLoading`), and both values as text.
///
/// ```swift
/// StateDifference(path: "login.isLoading", expected: "true", actual: "false")
/// // renders as "login.isLoading: true, false"
/// ```
///
/// When the states differ but no field does as text (a custom `==`), the
/// one difference has the path `""` and compares the whole values.
public struct StateDifference: Sendable, Hashable, CustomStringConvertible {
  /// The field's path, `""` for the whole state.
  ///
  /// ```swift
  /// if case .stateMismatch(_, let differences) = failure {
  ///   print(differences.map(\.path))   // ["login.isLoading"]
  /// }
  /// ```
  public let path: String
  /// The expected value, as a test writes it (`"Ada"`, `.loading(id: 3)`, `nil`).
  ///
  /// ```swift
  /// for difference in differences {
  ///   print(difference.path, "expected", difference.expected)   // name expected "Ada"
  /// }
  /// ```
  public let expected: String
  /// The actual value, as a test writes it.
  ///
  /// ```swift
  /// for difference in differences {
  ///   print(difference.path, "was", difference.actual)   // name was "Bob"
  /// }
  /// ```
  public let actual: String

  /// A difference at `path`.
  ///
  /// ```swift
  /// StateDifference(path: "count", expected: "2", actual: "1")
  /// ```
  public init(path: String, expected: String, actual: String) {
    self.path = path
    self.expected = expected
    self.actual = actual
  }

  /// `path: expected, actual`, or `state: expected, actual` for the whole state.
  ///
  /// ```swift
  /// print(StateDifference(path: "count", expected: "2", actual: "1"))   // count: 2, 1
  /// print(StateDifference(path: "", expected: "Token()", actual: "Token()"))   // state: Token(), Token()
  /// ```
  public var description: String {
    "\(path.isEmpty ? "state" : path): \(expected), \(actual)"
  }

  /// The fields where `actual` differs from `expected` (see
  /// `ValueRendering.differences(before:after:)`, the differ the
  /// inspector shares).
  static func between(expected: Any, actual: Any) -> [StateDifference] {
    ValueRendering.differences(before: expected, after: actual).map {
      StateDifference(path: $0.path, expected: $0.before, actual: $0.after)
    }
  }

  static func lines(_ differences: [StateDifference]) -> String {
    differences.map { "\n  \($0)" }.joined()
  }
}
