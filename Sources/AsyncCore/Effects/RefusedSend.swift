/// An action an effect sent after it could no longer send: the core refused
/// it, and told the diagnostics handler, as the ``EffectFailure/error`` of a
/// failure that names where the effect was made.
///
/// An effect's ``Send`` is valid while the effect runs. Once the effect's
/// operation has returned, or the effect was cancelled, `send` returns
/// `false` and the action is not reduced. An effect rarely reads that
/// result (`await send(.loaded(items))`), so the core also reports the first
/// refused action of each effect, once: a `Send` kept past its effect (in a
/// `Task {}` or a stored closure) is a bug to fix, and a cancelled effect
/// that still sends shows where cancellation was not checked.
///
/// ```swift
/// let core = Core(initialState: App(), diagnostics: { failure in
///   if let refused = failure.error as? RefusedSend, refused.reason == .effectEnded {
///     logger.error("\(failure)")   // a Send outlived its effect
///   }
/// }, reducer: reduceApp)
/// ```
public struct RefusedSend: Error, Sendable, CustomStringConvertible {
  /// Why the core refused the action. When more than one holds, the first
  /// of these wins: the effect had ended (even if it had been cancelled
  /// before: a `Send` used after its effect ended is a bug whatever ended
  /// it), the core had stopped, the effect had been cancelled.
  ///
  /// ```swift
  /// if let refused = failure.error as? RefusedSend, refused.reason != .coreStopped {
  ///   metrics.lateSends += 1
  /// }
  /// ```
  public enum Reason: Sendable, Hashable {
    /// The effect's operation had returned (and its `catch:` handler, if
    /// any): its `Send` was used after the effect ended, from a task or
    /// closure it escaped into.
    ///
    /// ```swift
    /// return .run { send in
    ///   Task { await send(.late) }   // may run after the effect ended: refused, reported
    /// }
    /// ```
    case effectEnded
    /// The effect had been cancelled: by ``Effect/cancel(id:)``,
    /// `cancelInFlight`, ``EffectHandle/cancel()``, ``Core/cancelEffects(id:)``
    /// or the cancellation of its task.
    ///
    /// ```swift
    /// return .run { send in
    ///   let page = await slowUncancellableLoad()   // cancelled meanwhile
    ///   await send(.loaded(page))                  // refused, reported
    /// }
    /// .cancellable(id: LoadID(), cancelInFlight: true)
    /// ```
    case effectCancelled
    /// The core had shut down or been released.
    ///
    /// ```swift
    /// await core.shutdown(.immediate)   // effects that send from now on are refused
    /// ```
    case coreStopped
  }

  /// The action the effect sent, which was not reduced.
  ///
  /// ```swift
  /// print(refused.action)   // loaded(["a", "b"])
  /// ```
  public let action: any Sendable
  /// The action whose reduction started the effect: the reducer that
  /// returned it ran for this action.
  ///
  /// ```swift
  /// print(refused.startedBy)   // refresh
  /// ```
  public let startedBy: any Sendable
  /// Why the action was refused.
  ///
  /// ```swift
  /// if refused.reason == .effectEnded { assertionFailure("\(refused)") }
  /// ```
  public let reason: Reason

  init(action: any Sendable, startedBy: any Sendable, reason: Reason) {
    self.action = action
    self.startedBy = startedBy
    self.reason = reason
  }

  /// The refusal in a sentence, with both actions rendered and cut at 200
  /// bytes each (an action's payload cannot flood a log).
  ///
  /// ```swift
  /// print(refused)
  /// // the effect of refresh sent loaded(["a", "b"]) after it was cancelled; it was not reduced
  /// ```
  public var description: String {
    let when =
      switch reason {
      case .effectEnded: "after it ended (a Send is valid only while its effect runs)"
      case .effectCancelled: "after it was cancelled"
      case .coreStopped: "after the core shut down"
      }
    return "the effect of \(Self.render(startedBy)) sent \(Self.render(action)) \(when); it was not reduced"
  }

  static func render(_ action: any Sendable) -> String {
    logSafe(String(describing: action), quoted: false)
  }
}
