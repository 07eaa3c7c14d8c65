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
  let deliver: @Sendable (Action) -> Bool

  /// A `Send` that hands actions to `deliver`, for testing an effect's
  /// operation on its own. Cores make their own.
  ///
  /// ```swift
  /// let send = Send<SearchAction>(dependencies: Dependencies { $0.api = FakeAPI() }, clock: clock) { action in
  ///   received.append(action)
  ///   return true
  /// }
  /// ```
  public init(
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    deliver: @escaping @Sendable (Action) -> Bool
  ) {
    self.dependencies = dependencies
    self.clock = clock
    self.deliver = deliver
  }

  /// Sends `action` to the core, to be reduced after the actions already
  /// waiting in its mailbox.
  ///
  /// A `Send` belongs to its effect and is valid while that effect runs:
  /// from the effect's own task, its child tasks, or a task it handed the
  /// `Send` to.
  ///
  /// ```swift
  /// return .run { send in
  ///   for await message in socket.messages {
  ///     guard await send(.received(message)) else { break }   // refused: cancelled or shut down
  ///   }
  /// }
  /// ```
  ///
  /// - Returns: `true` if the core accepted it; it will be reduced. `false`
  ///   if the effect was cancelled (``Effect/cancel(id:)``, `cancelInFlight`,
  ///   ``Core/shutdown(_:)`` with `.immediate`) or has already ended, or the
  ///   core has shut down or been released: the action will not be reduced.
  ///   Which task calls it does not matter; only the effect's state does.
  @discardableResult
  public func callAsFunction(_ action: Action) async -> Bool {
    deliver(action)
  }

  /// A `Send` for a child's actions that delivers them as `transform(child)`.
  func map<Child: Sendable>(_ transform: @escaping @Sendable (Child) -> Action) -> Send<Child> {
    let deliver = self.deliver
    return Send<Child>(dependencies: dependencies, clock: clock) { deliver(transform($0)) }
  }
}
