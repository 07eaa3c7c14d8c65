import AsyncCore

/// The one-time-password screen: after a code is sent, the user has 60
/// seconds to type it, shown as a countdown; then the screen goes back.
struct OneTimePassword: Sendable, Equatable {
  enum Screen: Sendable, Equatable {
    case enterPhone
    case enterCode
    case signedIn
  }

  var screen = Screen.enterPhone
  var secondsLeft = 0
  /// Which code request the countdown belongs to: a tick the previous
  /// countdown sent just before it was cancelled is recognised and ignored.
  var attempt = 0
  var message: String?
}

enum OneTimePasswordAction: Sendable, Equatable {
  case codeRequested
  case tick(attempt: Int)
  case codeEntered(String)
}

enum OneTimePasswordFeature {
  static let expectedCode = "424242"
  static let secondsToEnterCode = 60

  struct CountdownID: Hashable, Sendable {}

  static func reduce(_ state: inout OneTimePassword, _ action: OneTimePasswordAction) -> Effect<OneTimePasswordAction> {
    switch action {
    case .codeRequested:
      state.screen = .enterCode
      state.secondsLeft = secondsToEnterCode
      state.message = nil
      state.attempt += 1
      let attempt = state.attempt
      return .run { send in
        for _ in 0..<secondsToEnterCode {
          try await send.clock.sleep(for: .seconds(1))
          await send(.tick(attempt: attempt))
        }
      }
      .cancellable(id: CountdownID(), cancelInFlight: true)
    case .tick(let attempt):
      guard state.screen == .enterCode, attempt == state.attempt else { return .none }
      state.secondsLeft -= 1
      if state.secondsLeft == 0 {
        state.screen = .enterPhone
        state.message = "The code expired. Request a new one."
      }
      return .none
    case .codeEntered(let code):
      guard state.screen == .enterCode else { return .none }
      guard code == expectedCode else {
        state.message = "That code is not right."
        return .none
      }
      state.screen = .signedIn
      state.message = nil
      return .cancel(id: CountdownID())
    }
  }
}
