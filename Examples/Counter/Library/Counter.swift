import AsyncCore

/// Unicore's counter: `+` and `-` move the count by a step, and the step is
/// changed while the counter runs.
///
/// ```swift
/// let core = Core(initialState: Counter(), reducer: Reduce(Counter.reduce))
/// try await core.dispatch(.setStep(5))
/// try await core.dispatch(.increment)  // count 5
/// ```
public struct Counter: Sendable, Equatable, Codable {
  /// The value shown.
  public var count: Int
  /// How far `increment` and `decrement` move `count`.
  public var step: Int

  /// A counter at `count` that moves by `step`.
  public init(count: Int = 0, step: Int = 1) {
    self.count = count
    self.step = step
  }
}

/// What the user can do to a ``Counter``.
public enum CounterAction: Sendable, Equatable, Codable {
  /// Adds the step to the count.
  case increment
  /// Takes the step from the count.
  case decrement
  /// Changes the step for the actions that follow; the count stays.
  case setStep(Int)
  /// Puts the count back to zero; the step stays.
  case reset
}

extension Counter {
  /// The reducer: synchronous, run by the core one action at a time.
  ///
  /// ```swift
  /// var counter = Counter(step: 2)
  /// Counter.reduce(&counter, .increment)  // count 2
  /// ```
  @Sendable
  public static func reduce(_ state: inout Counter, _ action: CounterAction) {
    switch action {
    case .increment: state.count += state.step
    case .decrement: state.count -= state.step
    case .setStep(let step): state.step = step
    case .reset: state.count = 0
    }
  }
}
