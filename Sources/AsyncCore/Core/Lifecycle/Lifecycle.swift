import Synchronization

/// Runs a core's `LifecycleStateMachine` under a lock and mirrors its phase
/// in an atomic that every gate reads without the lock.
///
/// Shared by the core, its mailbox, its effect registry and its effect
/// queue, so each asks the same place what the core accepts.
@usableFromInline
final class Lifecycle: FinishSignalOwner {
  private let machine = Locked(LifecycleStateMachine())
  /// `LifecyclePhase.rawValue`, stored only under `machine`'s lock.
  @usableFromInline let mirror = Atomic<UInt8>(LifecyclePhase.running.rawValue)

  @usableFromInline
  init() {}

  // The gates: an acquiring read of the mirror, compared as raw values
  // (on the path of every `send` and `dispatch`).

  /// Actions from outside (`send`, `dispatch`): while running.
  @inlinable
  var acceptsOutsideActions: Bool {
    mirror.load(ordering: .acquiring) == LifecyclePhase.running.rawValue
  }

  /// Follow-up actions from effects: until an immediate shutdown begins.
  @inlinable
  var acceptsFollowUps: Bool {
    mirror.load(ordering: .acquiring) <= LifecyclePhase.draining.rawValue
  }

  /// New effects: until an immediate shutdown begins.
  var acceptsEffects: Bool { acceptsFollowUps }

  /// Shut down: observers have ended and the effect runner stops.
  @inlinable
  var isStopped: Bool {
    mirror.load(ordering: .acquiring) == LifecyclePhase.stopped.rawValue
  }

  func shutdown(_ mode: ShutdownMode) -> LifecycleStateMachine.ShutdownAction {
    machine.withLock { machine in
      defer { mirror.store(machine.phase.rawValue, ordering: .releasing) }
      return machine.shutdown(mode)
    }
  }

  func withFinishSignal<Result>(_ body: (inout FinishSignal) -> Result) -> Result {
    machine.withLock { body(&$0.finished) }
  }

  /// Moves to `stopped`; `true` for the call that did.
  func stop() -> Bool {
    machine.withLock { machine in
      defer { mirror.store(machine.phase.rawValue, ordering: .releasing) }
      return machine.stop()
    }
  }
}
