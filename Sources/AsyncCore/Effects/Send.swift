/// An effect's way back to its core: sends actions and reads the core's
/// clock and dependencies.
///
/// ```swift
/// return .run { send in
///   try await send.clock.sleep(for: .seconds(60))
///   await send(.codeExpired)
/// }
/// ```
public struct Send<Action: Sendable>: Sendable {
  /// The clock the core was created with (`ContinuousClock` by default).
  /// Effects read time through it, so a test can drive it.
  ///
  /// ```swift
  /// return .run { send in
  ///   try await send.clock.sleep(for: .seconds(1))   // a test's ManualClock: no real wait
  ///   await send(.tick)
  /// }
  /// ```
  public let clock: any Clock<Duration>
  /// The core's dependencies as they were when the effect was started
  /// (see ``Core/updateDependencies(_:)``).
  ///
  /// ```swift
  /// return .run { send in
  ///   await send(.loaded(try await send.dependencies.api.profile()))
  /// }
  /// ```
  public let dependencies: Dependencies
  /// Where actions go (internal for `changingDependencies`, in
  /// Dependencies/Effect+Dependencies.swift).
  let deliver: @Sendable (Action) -> SendResult

  /// A `Send` that hands actions to `deliver`, for testing an effect's
  /// operation on its own. Cores make their own.
  ///
  /// ```swift
  /// let send = Send<SearchAction>(dependencies: Dependencies { $0.api = FakeAPI() }, clock: clock) { action in
  ///   received.append(action)
  ///   return .accepted
  /// }
  /// ```
  ///
  /// What `deliver` returns is what the effect's `await send(action)`
  /// returns.
  public init(
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    deliver: @escaping @Sendable (Action) -> SendResult
  ) {
    self.dependencies = dependencies
    self.clock = clock
    self.deliver = deliver
  }

  /// Sends `action` to the core, to be reduced after the actions already
  /// waiting in its mailbox; returns once the core has accepted it, without
  /// waiting for it to be reduced.
  ///
  /// A `Send` belongs to its effect and is valid while that effect runs:
  /// from the effect's own task, its child tasks, or a task it handed the
  /// `Send` to.
  ///
  /// ```swift
  /// return .run { send in
  ///   for await message in socket.messages {
  ///     guard await send(.received(message)) == .accepted else { break }   // cancelled, or shut down
  ///   }
  /// }
  /// ```
  ///
  /// It never waits for the core: an accepted action is queued, and when
  /// the call returns it may not have been reduced yet. Actions one effect
  /// sends are reduced in the order sent. To act on the state an action
  /// leads to, let the reducer return the next effect.
  ///
  /// - Returns: ``SendResult/accepted`` if the core accepted the action; it
  ///   will be reduced. Otherwise it was not accepted and will not be
  ///   reduced, and the effect's first refused action is reported to the
  ///   diagnostics handler (``CoreDiagnostic/sendRefused(action:startedBy:reason:)``):
  ///   - ``SendResult/effectCancelled`` once the effect was cancelled
  ///     (``Effect/cancel(id:)``, `cancelInFlight`, ``Core/cancelEffects(id:)``,
  ///     ``EffectHandle/cancel()``, its task's cancellation), a child's
  ///     effect included once its child has left the state;
  ///   - ``SendResult/effectEnded`` once the effect's operation (and its
  ///     `catch:` handler) has returned, for a `Send` it handed on, even
  ///     after the core has shut down or been released;
  ///   - ``SendResult/shutDown`` once ``Core/shutdown(_:)`` with `.immediate`
  ///     has begun, or a graceful shutdown has returned, or the core has
  ///     been released. During a graceful shutdown the effects still run and
  ///     what they send is accepted.
  ///
  ///   An effect's send is never ``SendResult/mailboxFull`` (it bypasses a
  ///   `mailboxCapacity`) nor ``SendResult/childRemoved``. Which task calls
  ///   it does not matter; only the effect's state does.
  @discardableResult
  public func callAsFunction(_ action: Action) async -> SendResult {
    deliver(action)
  }

  /// A `Send` for a child's actions that delivers them as `transform(child)`.
  func map<Child: Sendable>(_ transform: @escaping @Sendable (Child) -> Action) -> Send<Child> {
    let deliver = self.deliver
    return Send<Child>(dependencies: dependencies, clock: clock) { deliver(transform($0)) }
  }
}

extension SendResult {
  /// What an effect's `send` returns when the core refused its action.
  init(refusedBecause reason: CoreDiagnostic.RefusalReason) {
    switch reason {
    case .effectCancelled: self = .effectCancelled
    case .effectEnded: self = .effectEnded
    case .coreStopped: self = .shutDown
    }
  }
}
