import Synchronization

/// One recorder's side that its core holds: the core hands it each action
/// it reduces, synchronously, inside its isolation, and the recorder reads
/// what it holds. Runs `RecorderStateMachine` under a lock; nothing it does
/// under the lock calls user code or resumes anything (it has no waiters:
/// a recorder waits on its core, not on this).
///
/// It never refers to the core, so a recorder does not keep a core alive,
/// and the core's reference to it makes no cycle.
@usableFromInline
final class RecorderStorage<State: Sendable, Action: Sendable>: Sendable {
  private let machine: Locked<RecorderStateMachine<State, Action>>
  /// The time since the recording started, by the core's clock.
  private let elapsed: @Sendable () -> Duration
  /// The core's count of observers: a recorder counts as one while it
  /// records, so the core publishes each action on its own (and prunes it
  /// once it stops).
  private let counter: ObserverCounter

  init(limit: Int, initialState: State, clock: any Clock<Duration>, counter: ObserverCounter) {
    self.machine = Locked(RecorderStateMachine(limit: limit, initialState: initialState))
    self.elapsed = Self.elapsedReader(clock)
    self.counter = counter
    counter.value.add(1, ordering: .relaxed)
  }

  /// A reader of the time since now on `clock`, its instant type opened
  /// once here rather than on every action.
  private static func elapsedReader<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }

  /// Whether it still takes actions (the core drops it from its list once
  /// not).
  var isRecording: Bool {
    machine.withLock { $0.phase == .recording }
  }

  /// Called by the core after reducing an action, with its record (of
  /// which it keeps the action and the state after). The clock is read
  /// before the lock is taken: a clock is the user's code.
  @usableFromInline
  func deliver(_ record: ActionRecord<State, Action>) {
    let time = elapsed().truncatedToNanoseconds
    machine.withLock { _ = $0.append(record.action, at: time, leaving: record.stateAfter) }
  }

  /// Stops taking actions; what it holds stays.
  func stop() {
    if machine.withLock({ $0.stop() }) { counter.value.subtract(1, ordering: .relaxed) }
  }

  /// Its recorder is gone: stops and drops what it held.
  func release() {
    if machine.withLock({ $0.release() }) { counter.value.subtract(1, ordering: .relaxed) }
  }

  /// What it holds now.
  func recording() -> Recording<State, Action> {
    machine.withLock { $0.recording() }
  }
}
