import AsyncCore

/// The test core's waits: each races what it waits for against a deadline
/// on the real clock, so none can hang a test.
enum Waiting {
  enum Outcome: Sendable {
    case recorded
    case effectsEnded
    case deadlinePassed
  }

  /// Returns when `log` holds more than `count` records, when every one of
  /// `handles` has finished, or at `deadline`, whichever comes first.
  static func nextRecord<State, Action>(
    in log: ActionLog<State, Action>,
    beyond count: Int,
    orEndOf handles: [EffectHandle],
    until deadline: ContinuousClock.Instant
  ) async -> Outcome {
    await withTaskGroup(of: Outcome.self) { group in
      group.addTask {
        await log.waitForRecord(beyond: count)
        return .recorded
      }
      group.addTask {
        await allFinished(handles)
        return .effectsEnded
      }
      group.addTask {
        try? await Task.sleep(until: deadline, clock: .continuous)
        return .deadlinePassed
      }
      // Every child is cancellable, so cancelling the others ends the group.
      let first = await group.next() ?? .deadlinePassed
      group.cancelAll()
      return first
    }
  }

  /// Returns when every one of `handles` has finished, or at `deadline`.
  static func effects(_ handles: [EffectHandle], until deadline: ContinuousClock.Instant) async {
    guard !handles.allSatisfy(\.isFinished) else { return }
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await allFinished(handles) }
      group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
      await group.next()
      group.cancelAll()
    }
  }

  /// Returns when every handle has finished, or early when the task is
  /// cancelled.
  private static func allFinished(_ handles: [EffectHandle]) async {
    for handle in handles where !handle.isFinished {
      guard await waitForEffects(of: handle) else { return }
    }
  }
}

/// Waits until everything `handle` covers has finished, or the waiting task
/// is cancelled; returns whether it finished.
func waitForEffects(of handle: EffectHandle) async -> Bool {
  do {
    try await handle.finish()
    return true
  } catch {
    return false
  }
}
