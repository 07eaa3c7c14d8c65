/// Where a core is in its life: the one place that says what it accepts.
///
/// The phases only move forward. ``Lifecycle`` mirrors each in an atomic
/// that every gate reads (under the mailbox's, registry's or queue's lock
/// where it has one), so "refused from the instant of the call" holds for
/// every task.
@usableFromInline
enum LifecyclePhase: UInt8, Sendable, Comparable {
  /// Accepts everything.
  case running
  /// A graceful shutdown began: actions from outside are refused; effects
  /// still running may send follow-ups and those may start effects.
  case draining
  /// An immediate shutdown began: effects are cancelled, their sends and
  /// new effects are refused; actions accepted before are still reduced.
  case cancelling
  /// Shut down (or released): nothing is accepted; observers have ended.
  case stopped

  @usableFromInline
  static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The transitions of a core's lifecycle. Pure: `Lifecycle` runs it under a
/// lock and carries out what each transition returns.
struct LifecycleStateMachine {
  private(set) var phase = LifecyclePhase.running
  /// Ends once the stop has: every accepted action reduced, the journal closed.
  var finished = FinishSignal()

  /// What the caller of `shutdown` must do once the lock is released.
  enum ShutdownAction: Equatable {
    /// Let effects finish (a graceful call; on a core already cancelling or
    /// stopped there is nothing more to narrow, and it waits the same way).
    case drain
    /// Cancel every effect (the phase is `cancelling` or later).
    case cancelEffects
  }

  /// `shutdown(mode)` was called: narrow what is accepted (never widen).
  mutating func shutdown(_ mode: ShutdownMode) -> ShutdownAction {
    switch mode {
    case .graceful:
      if phase == .running { phase = .draining }
      return .drain
    case .immediate:
      if phase < .cancelling { phase = .cancelling }
      return .cancelEffects
    }
  }

  /// Every effect the stop waits for has ended. Returns `true` for the call
  /// that moved the core to `stopped`: it ends the observers and the runner.
  mutating func stop() -> Bool {
    guard phase != .stopped else { return false }
    phase = .stopped
    return true
  }
}
