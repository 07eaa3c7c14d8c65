import AsyncCore

/// Unicore's counter: increments and decrements by a step the user can change.
struct StepCounter: Sendable, Equatable {
  var count = 0
  var step = 1
}

enum StepCounterAction: Sendable, Equatable {
  case increment
  case decrement
  case setStep(Int)
}

func reduceStepCounter(_ state: inout StepCounter, _ action: StepCounterAction) {
  switch action {
  case .increment: state.count += state.step
  case .decrement: state.count -= state.step
  case .setStep(let step): state.step = step
  }
}
