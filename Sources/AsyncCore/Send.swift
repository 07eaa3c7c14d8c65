/// An effect's way back to its core: sends actions and reads the core's clock.
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
  public let clock: any Clock<Duration>
  private let deliver: @Sendable (Action) -> Bool

  /// A `Send` that hands actions to `deliver`, for testing an effect's
  /// operation on its own. Cores make their own.
  ///
  /// ```swift
  /// let send = Send<SearchAction>(clock: clock) { action in received.append(action); return true }
  /// ```
  public init(clock: any Clock<Duration> = ContinuousClock(), deliver: @escaping @Sendable (Action) -> Bool) {
    self.clock = clock
    self.deliver = deliver
  }

  /// Sends `action` to the core, to be reduced after the actions already
  /// waiting in its mailbox.
  ///
  /// - Returns: `true` if the core accepted it. `false` if the effect was
  ///   cancelled, or the core has shut down or been released: the action
  ///   will not be reduced.
  @discardableResult
  public func callAsFunction(_ action: Action) async -> Bool {
    // A cancelled effect (cancel(id:), cancelInFlight, shutdown) may still be
    // running; what it sends now is stale, so it is refused, and the effect
    // is told.
    guard !Task.isCancelled else { return false }
    return deliver(action)
  }

  /// A `Send` for a child's actions that delivers them as `transform(child)`.
  func map<Child: Sendable>(_ transform: @escaping @Sendable (Child) -> Action) -> Send<Child> {
    let deliver = self.deliver
    return Send<Child>(clock: clock) { deliver(transform($0)) }
  }
}
