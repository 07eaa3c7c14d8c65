import AsyncCore
import Testing

extension TestCore {
  /// Reduces each recorded action in order, starting no effect, then records an Issue listing the
  /// field differences if the state is not the recording's finalState (the replay did not reproduce it).
  ///
  /// A bug report (AsyncCoreJournal's `Recording(contentsOf:)`) becomes a
  /// test in three lines:
  ///
  /// ```swift
  /// let report = try Recording<AppState, AppAction>(contentsOf: "report.json")
  /// let core = TestCore(initialState: report.initialState, reducer: appReducer)
  /// await core.replay(report)
  /// ```
  ///
  /// The actions are reduced as `Core.replay(_:)` reduces them: what the
  /// reducer returns is dropped (the actions effects sent are in the
  /// recording), so nothing is left to receive and no effect runs. The
  /// test core then holds the replayed state: ``state`` is it, and the next
  /// `send` starts from it. When it differs from the recording's
  /// `finalState`, the issue
  /// (``TestCoreFailure/stateMismatch(step:differences:)``, with the
  /// step `replay(N actions)`) lists each differing field with the
  /// recording's value first: the reducer no longer does what it did when
  /// the recording was made, or the test core did not start from the
  /// recording's `initialState`.
  ///
  /// - Important: In exhaustive mode, actions effects sent before the
  ///   replay must have been received, as before a `send`: each one left
  ///   is recorded and skipped.
  ///
  /// - Parameters:
  ///   - recording: What `Core.record(last:)` captured, or a bug report.
  ///   - sourceLocation: Where a failure is recorded; leave the default, the
  ///     call's place.
  public nonisolated(nonsending) func replay(
    _ recording: Recording<State, Action>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    lastSourceLocation = sourceLocation
    reportEffectFailures(at: sourceLocation)
    let number = origins.count
    let step = "replay(\(recording.entries.count) \(recording.entries.count == 1 ? "action" : "actions"))"
    origins.append(Origin(step: step, sourceLocation: sourceLocation, effects: .none))
    let tagged = recording.actions.map { TestAction.sent($0, origin: number) }
    do {
      try await core.replay(actions: tagged)
    } catch {
      // The inner core belongs to this test core, which never shuts it down.
      fatalError("AsyncCoreTesting: internal: the test core's core refused \(step): \(error)")
    }
    takeInRecords()
    let isReplayed = { (record: Record<State, Action>) in record.isSent && record.origin == number }
    let first = inbox.firstIndex(where: isReplayed) ?? inbox.endIndex
    let earlier = inbox[..<first]
    if exhaustivity == .on, !earlier.isEmpty {
      record(
        .actionsNotReceivedBeforeSend(step: step, received: earlier.map { ValueRendering.value($0.action) }),
        at: sourceLocation)
    }
    if let last = earlier.last { state = last.stateAfter }
    inbox.removeFirst(first)
    // What effects of earlier sends sent while the replay ran stays to be
    // received; the replay itself started none.
    if let last = inbox.last(where: isReplayed) { state = last.stateAfter }
    inbox.removeAll(where: isReplayed)
    if state != recording.finalState {
      record(
        .stateMismatch(step: step, differences: StateDifference.between(expected: recording.finalState, actual: state)),
        at: sourceLocation)
    }
  }
}
