import AsyncCore

/// What the test core's inner core reduces: the test's and effects'
/// actions, each tagged with the `send` it descends from (so a `send` finds
/// its own action, and reports name their origin), and the command to
/// cancel every effect.
enum TestAction<Action: Sendable>: Sendable {
  /// An action the test sent; `origin` numbers the `send`.
  case sent(Action, origin: Int)
  /// An action an effect sent, descending from `send` number `origin`.
  case received(Action, origin: Int)
  /// Cancels every effect (`cancelInFlightEffects()`, `finish()`).
  case cancelEffects
}

extension TestAction {
  /// The user's action inside `value`, a `TestAction` the inner core
  /// reported (a refused send names two); `value` itself otherwise.
  static func userAction(_ value: any Sendable) -> any Sendable {
    switch value as? TestAction {
    case .sent(let action, _)?, .received(let action, _)?: action
    case .cancelEffects?, nil: value
    }
  }
}

/// The cancel id every effect of a test core is marked with.
struct TestCoreEffects: Hashable, Sendable {}

/// One reduced action of the user's reducer, with the states around it.
struct Record<State: Sendable, Action: Sendable>: Sendable {
  let action: Action
  /// The `send` this action is, or descends from.
  let origin: Int
  /// Whether the test sent it (rather than an effect).
  let isSent: Bool
  let stateBefore: State
  let stateAfter: State
}

extension TestAction {
  /// The inner core's reducer: runs `reducer`, logs the record
  /// synchronously, and tags what the effects send with the same origin;
  /// every effect is cancellable by `TestCoreEffects`.
  static func reducer<State: Sendable>(
    _ reducer: Reduce<State, Action>,
    log: ActionLog<State, Action>
  ) -> Reduce<State, TestAction<Action>> {
    Reduce { state, tagged in
      let action: Action
      let origin: Int
      let isSent: Bool
      switch tagged {
      case .cancelEffects:
        return .cancel(id: TestCoreEffects())
      case .sent(let sent, let number):
        (action, origin, isSent) = (sent, number, true)
      case .received(let received, let number):
        (action, origin, isSent) = (received, number, false)
      }
      let before = state
      let effect = reducer.reduce(into: &state, action: action)
      log.append(Record(action: action, origin: origin, isSent: isSent, stateBefore: before, stateAfter: state))
      return effect.map { TestAction.received($0, origin: origin) }.cancellable(id: TestCoreEffects())
    }
  }
}
