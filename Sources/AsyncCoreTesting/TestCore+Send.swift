import AsyncCore
import Testing

extension TestCore {
  /// Sends `action`, as the app would, and checks that the state changed
  /// exactly as the `assert:` closure describes.
  ///
  /// ```swift
  /// await store.send(.increment) { $0.count = 1 }
  /// await store.send(.noOp)                        // no closure: the state must not change
  /// ```
  ///
  /// The `assert:` closure receives the state before the action and
  /// mutates it into the state expected after it. A difference is recorded
  /// as an issue at the call, one line per field that differs
  /// (``TestCoreFailure/stateMismatch(step:differences:)``). In
  /// non-exhaustive mode the closure receives the state after the action
  /// instead and only the fields it sets are compared, so set them
  /// (`$0.count = 2`) rather than change them (`$0.count += 1`).
  ///
  /// A closure says a change is expected: when the action changed nothing,
  /// passing one is recorded (``TestCoreFailure/closureChangedNothing``), in
  /// either mode; leave it out instead. While the closure runs, ``state``
  /// is still the state before the action.
  ///
  /// Returns once the action is reduced, with the actions its `.send`
  /// effects return (to be received next). Its asynchronous effects run on;
  /// what they send is asserted with ``receive(_:timeout:assert:sourceLocation:)``.
  /// The handle it returns ends or waits for this action's effects alone:
  ///
  /// ```swift
  /// let timer = await store.send(.startTimer) { $0.isTiming = true }
  /// // … the test advances the clock and receives ticks …
  /// await timer.cancel()   // the timer stops; other effects run on
  /// ```
  ///
  /// - Important: In exhaustive mode, actions effects sent before this one
  ///   must have been received: each one left is recorded
  ///   (``TestCoreFailure/actionsNotReceivedBeforeSend(step:received:)``)
  ///   and skipped. In non-exhaustive mode they are skipped silently.
  ///
  /// - Parameters:
  ///   - action: The action to send.
  ///   - update: The `assert:` closure: mutates the state before the action
  ///     into the state expected after it. Leave it out when the action
  ///     changes nothing.
  ///   - sourceLocation: Where a failure is recorded; leave the default, the
  ///     call's place.
  /// - Returns: The effects this action started; see ``TestEffectHandle``.
  @discardableResult
  public nonisolated(nonsending) func send(
    _ action: Action,
    assert update: ((_ state: inout State) throws -> Void)? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async -> TestEffectHandle {
    lastSourceLocation = sourceLocation
    reportEffectFailures(at: sourceLocation)
    let number = origins.count
    let step = "send(\(ValueRendering.value(action)))"
    let effects: EffectHandle
    do {
      effects = try await core.dispatch(.sent(action, origin: number))
    } catch {
      // The inner core belongs to this test core, which never shuts it down.
      fatalError("AsyncCoreTesting: internal: the test core's core refused \(step): \(error)")
    }
    let origin = Origin(step: step, sourceLocation: sourceLocation, effects: effects)
    origins.append(origin)
    inFlight.append(number)

    takeInRecords()
    guard let index = inbox.firstIndex(where: { $0.isSent && $0.origin == number }) else {
      fatalError("AsyncCoreTesting: internal: \(step) was reduced but not logged")
    }
    let earlier = inbox[..<index]
    if exhaustivity == .on, !earlier.isEmpty {
      record(
        .actionsNotReceivedBeforeSend(step: step, received: earlier.map { ValueRendering.value($0.action) }),
        at: sourceLocation)
    }
    let sent = inbox[index]
    inbox.removeFirst(index + 1)
    check(sent, step: step, update: update, at: sourceLocation)
    reportEffectFailures(at: sourceLocation)
    return TestEffectHandle(effects: effects, origin: origin.description, timeout: timeout)
  }
}

// A test core is used by one test, from one task at a time: its methods run
// on the caller's isolation (`nonisolated(nonsending)`), so a `@MainActor`
// test uses it as well as a nonisolated one.
@available(*, unavailable, message: "A TestCore is used from one task at a time")
extension TestCore: Sendable {}
