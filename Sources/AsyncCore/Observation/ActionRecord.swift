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
  public let action: Action
  /// The state the reducer was given.
  public let stateBefore: State
  /// The state the reducer left.
  public let stateAfter: State

  public init(action: Action, stateBefore: State, stateAfter: State) {
    self.action = action
    self.stateBefore = stateBefore
    self.stateAfter = stateAfter
  }
}

extension ActionRecord: Equatable where State: Equatable, Action: Equatable {}
