/// Records the actions one core reduces, keeping the newest of them: made
/// by ``Core/record(last:)``.
///
/// ```swift
/// let recorder = await core.record(last: 200)
/// // … the app runs …
/// let recording = await recorder.recording()   // a bug report's content
/// ```
///
/// A recorder costs its core a copy of the state, a read of the clock and
/// a lock per action while it records, and nothing once it is cancelled or
/// released. It does not keep its core alive; a core that goes away
/// leaves it with what it held.
///
/// - Important: Release it, or call ``cancel()``, when it is not needed: a
///   recorder holds up to `limit` actions and as many states.
public final class Recorder<State: Sendable, Action: Sendable>: Sendable {
  let storage: RecorderStorage<State, Action>
  /// Reduces what its core has accepted, so that ``recording()`` includes
  /// it; does nothing once the core is gone. Holds the core weakly.
  private let catchUp: @Sendable () async -> Void

  init(storage: RecorderStorage<State, Action>, catchUp: @escaping @Sendable () async -> Void) {
    self.storage = storage
    self.catchUp = catchUp
  }

  deinit {
    // Nobody can ask for what it holds any more: drop it now, and the
    // core drops the storage at its next publication.
    storage.release()
  }

  /// What the recorder holds now: every action its core reduced before
  /// this call (the newest `limit`), the state before the oldest of them
  /// and the state after the newest.
  ///
  /// ```swift
  /// core.send(.increment)
  /// let recording = await recorder.recording()
  /// print(recording.actions.last as Any)   // .increment: a task reads its own writes
  /// ```
  ///
  /// Actions accepted before the call (by ``Core/send(_:)`` and the rest)
  /// are reduced first, as ``Core/state`` does. With no action recorded,
  /// both states are the state when recording started. After ``cancel()``,
  /// or once the core has shut down or gone away, what it held then.
  public func recording() async -> Recording<State, Action> {
    await catchUp()
    return storage.recording()
  }

  /// Stops recording: actions reduced from now on are not kept, and the
  /// core stops paying for the recorder. ``recording()`` still returns what
  /// it held.
  ///
  /// ```swift
  /// recorder.cancel()
  /// let report = await recorder.recording()   // what it held when cancelled
  /// ```
  public func cancel() {
    storage.stop()
  }
}
