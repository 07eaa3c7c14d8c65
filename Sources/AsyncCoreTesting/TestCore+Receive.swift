import AsyncCore
import Testing

extension TestCore {
  /// Asserts that the next action effects sent is `action`, waiting for it
  /// if needed, and checks the state it left with the `assert:` closure, as
  /// ``send(_:assert:sourceLocation:)`` does.
  ///
  /// ```swift
  /// await store.send(.refresh) { $0.isLoading = true }
  /// await store.receive(.loaded(["a", "b"])) {
  ///   $0.isLoading = false
  ///   $0.items = ["a", "b"]
  /// }
  /// ```
  ///
  /// Actions are received in the order the core reduced them, `.send`
  /// follow-ups included. In non-exhaustive mode, actions before the first
  /// one equal to `action` are passed over. As with `send`, a closure given
  /// for an action that changed nothing is recorded
  /// (``TestCoreFailure/closureChangedNothing``), and ``state`` is the state
  /// before the action while the closure runs.
  ///
  /// Effects that ``skipInFlightEffects(sourceLocation:)`` stopped tracking
  /// still send: their actions are received like any other.
  ///
  /// - Parameters:
  ///   - action: The action expected next, compared with `==`.
  ///   - timeout: How long to wait, in real time, for the action while
  ///     effects run; by default the test core's ``timeout``. When no effect
  ///     is in flight, nothing more can arrive and the call fails at once.
  ///   - update: The `assert:` closure: mutates the state before the action
  ///     into the state expected after it. Leave it out when the action
  ///     changes nothing.
  ///   - sourceLocation: Where a failure is recorded; leave the default, the
  ///     call's place.
  public nonisolated(nonsending) func receive(
    _ action: Action,
    timeout: Duration? = nil,
    assert update: ((_ state: inout State) throws -> Void)? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async where Action: Equatable {
    await receive(
      ValueRendering.value(action), matching: { $0 == action }, timeout: timeout, update: update,
      sourceLocation: sourceLocation)
  }

  /// Asserts that the next action effects sent is one `matches` accepts:
  /// for actions that are not `Equatable`, or to match a case whatever its
  /// payload.
  ///
  /// ```swift
  /// await store.receive(
  ///   where: { if case .response = $0 { true } else { false } },
  ///   assert: { $0.isLoading = false })
  /// ```
  ///
  /// Otherwise the same as ``receive(_:timeout:assert:sourceLocation:)``.
  public nonisolated(nonsending) func receive(
    where matches: (Action) -> Bool,
    timeout: Duration? = nil,
    assert update: ((_ state: inout State) throws -> Void)? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    await receive(
      "an action matching where:", matching: matches, timeout: timeout, update: update,
      sourceLocation: sourceLocation)
  }

  nonisolated(nonsending) func receive(
    _ expected: String,
    matching matches: (Action) -> Bool,
    timeout: Duration?,
    update: ((inout State) throws -> Void)?,
    sourceLocation: SourceLocation
  ) async {
    lastSourceLocation = sourceLocation
    reportEffectFailures(at: sourceLocation)
    defer { reportEffectFailures(at: sourceLocation) }
    let timeout = timeout ?? self.timeout
    let deadline = ContinuousClock.now.advanced(by: timeout)
    let step = "receive(\(expected))"
    var skipped: [String] = []
    while true {
      // Read before taking records in: once every effect has ended, all it
      // sent is in the log, so an empty inbox then means none will come.
      let running = unfinishedOrigins()
      takeInRecords()
      switch exhaustivity {
      case .on:
        if let next = inbox.first {
          inbox.removeFirst()
          guard matches(next.action) else {
            state = next.stateAfter
            record(
              .unexpectedAction(expected: expected, received: ValueRendering.value(next.action)), at: sourceLocation)
            return
          }
          check(next, step: step, update: update, at: sourceLocation)
          return
        }
      case .off:
        if let index = inbox.firstIndex(where: { matches($0.action) }) {
          let next = inbox[index]
          inbox.removeFirst(index + 1)
          check(next, step: step, update: update, at: sourceLocation)
          return
        }
        skipped += inbox.map { ValueRendering.value($0.action) }
        skipInbox()
      }
      if running.isEmpty || ContinuousClock.now >= deadline {
        record(
          .actionNotReceived(
            expected: expected, timeout: timeout, skipped: skipped,
            inFlight: running.map { origins[$0].description }),
          at: sourceLocation)
        return
      }
      _ = await Waiting.nextRecord(
        in: log, beyond: cursor, orEndOf: running.map { origins[$0].effects }, until: deadline)
    }
  }
}
