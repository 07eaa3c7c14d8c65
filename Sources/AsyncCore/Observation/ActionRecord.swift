/// One reduced action with the state before and after it, as delivered by
/// ``Core/actions(buffering:)``: for logging, debugging, and the "what did the
/// user do" trail of a bug report.
///
/// ```swift
/// for await record in await core.actions() {
///   print(record.action, record.stateBefore.count, "→", record.stateAfter.count)
/// }
/// ```
public struct ActionRecord<State: Sendable, Action: Sendable>: Sendable {
  /// The action the reducer ran.
  ///
  /// ```swift
  /// for await record in await core.actions() where record.action == .checkout {
  ///   analytics.track("checkout", items: record.stateBefore.cart.count)
  /// }
  /// ```
  public let action: Action
  /// The state the reducer was given.
  ///
  /// ```swift
  /// for await record in await core.actions() {
  ///   print("count", record.stateBefore.count, "→", record.stateAfter.count)
  /// }
  /// ```
  public let stateBefore: State
  /// The state the reducer left.
  ///
  /// ```swift
  /// for await record in await core.actions() where record.stateAfter.count > 100 {
  ///   logger.warning("count passed 100 after \(String(describing: record.action))")
  /// }
  /// ```
  public let stateAfter: State

  /// A record of `action` taking `stateBefore` to `stateAfter`: what a test
  /// compares ``Core/actions(buffering:)``'s records with.
  ///
  /// ```swift
  /// var iterator = await core.actions().makeAsyncIterator()
  /// core.send(.increment)
  /// let record = await iterator.next()
  /// #expect(record == ActionRecord(action: .increment, stateBefore: Counter(), stateAfter: Counter(count: 1)))
  /// ```
  public init(action: Action, stateBefore: State, stateAfter: State) {
    self.action = action
    self.stateBefore = stateBefore
    self.stateAfter = stateAfter
  }
}

extension ActionRecord: Equatable where State: Equatable, Action: Equatable {}
