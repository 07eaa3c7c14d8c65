import Synchronization

/// One recorder's side that its core holds and hands each reduced action,
/// under a lock (`RecorderStateMachine`) with no user code and no waiters.
/// It never refers to the core: no cycle, and no core kept alive.
@usableFromInline
final class RecorderStorage<State: Sendable, Action: Sendable>: Sendable {
  private let machine: Locked<RecorderStateMachine<State, Action>>
  /// The time since the recording started, by the core's clock.
  private let elapsed: @Sendable () -> Duration
  /// The core's count of observers, in which a recording recorder counts.
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

  /// Called by the core after reducing an action. The clock, user code, is
  /// read before the lock.
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
