import AsyncCore
import AsyncCoreTesting

/// The Core seed's one-time-password login: after a code is requested, the
/// user has 60 seconds to enter it; the code is verified over the network;
/// success goes to the home screen.
package struct Login: Sendable, Equatable {
  package enum Screen: Sendable, Equatable {
    case enterPhone
    case enterCode
    case home
  }

  package var screen = Screen.enterPhone
  package var secondsLeft = 0
  /// Which code request the countdown and a verification belong to: what a
  /// previous request's effects send late is recognised and ignored.
  package var attempt = 0
  /// A verification is in flight.
  package var isVerifying = false
  package var alert: String?

  package init() {}
}

package enum LoginAction: Sendable, Equatable {
  case codeRequested
  case tick(attempt: Int)
  case codeEntered(String)
  case verified(attempt: Int, isValid: Bool)
  case verificationFailed(attempt: Int)
  case alertDismissed
}

/// The network worker that checks a code: a dependency the verification
/// effect reads from `send.dependencies`, which a test replaces.
package struct CodeVerifier: Sendable {
  package var verify: @Sendable (_ code: String) async throws -> Bool

  package init(verify: @escaping @Sendable (_ code: String) async throws -> Bool) {
    self.verify = verify
  }

  package struct Unreachable: Error, Equatable {}

  /// A server that answers after `latency` on `clock`: only `valid` is right.
  package static func server(on clock: ManualClock, latency: Duration, valid: String = LoginFeature.validCode) -> Self {
    CodeVerifier { code in
      try await clock.sleep(for: latency)
      return code == valid
    }
  }

  /// A server that cannot be reached, after `latency` on `clock`.
  package static func unreachable(on clock: ManualClock, latency: Duration) -> Self {
    CodeVerifier { _ in
      try await clock.sleep(for: latency)
      throw Unreachable()
    }
  }
}

/// The verifier has no default: a core that was not given one stops with a
/// message naming this key when the effect reads it.
package enum CodeVerifierKey: DependencyKey {
  package typealias Value = CodeVerifier
}

extension Dependencies {
  package var codeVerifier: CodeVerifier {
    get { self[CodeVerifierKey.self] }
    set { self[CodeVerifierKey.self] = newValue }
  }
}

package struct LoginFeature: Sendable {
  package static let validCode = "424242"
  package static let secondsToEnterCode = 60
  package static let expired = "The code expired. Request a new one."
  package static let wrongCode = "That code is not right."
  package static let unreachable = "Could not reach the server. Try again."

  package struct CountdownID: Hashable, Sendable {}

  package init() {}

  package func reduce(_ state: inout Login, _ action: LoginAction) -> Effect<LoginAction> {
    switch action {
    case .codeRequested:
      state.screen = .enterCode
      state.secondsLeft = Self.secondsToEnterCode
      state.attempt += 1
      state.isVerifying = false
      state.alert = nil
      let attempt = state.attempt
      return .run { send in
        for _ in 0..<Self.secondsToEnterCode {
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
        state.isVerifying = false
        state.alert = Self.expired
      }
      return .none

    case .codeEntered(let code):
      guard state.screen == .enterCode, !state.isVerifying else { return .none }
      state.isVerifying = true
      state.alert = nil
      let attempt = state.attempt
      return .run { send in
        let isValid = try await send.dependencies.codeVerifier.verify(code)
        await send(.verified(attempt: attempt, isValid: isValid))
      } catch: { _, send in
        await send(.verificationFailed(attempt: attempt))
      }

    case .verified(let attempt, let isValid):
      // A response for an earlier request, or after the code expired: ignored.
      guard state.screen == .enterCode, attempt == state.attempt else { return .none }
      state.isVerifying = false
      guard isValid else {
        state.alert = Self.wrongCode
        return .none
      }
      state.screen = .home
      return .cancel(id: CountdownID())

    case .verificationFailed(let attempt):
      guard state.screen == .enterCode, attempt == state.attempt else { return .none }
      state.isVerifying = false
      state.alert = Self.unreachable
      return .none

    case .alertDismissed:
      state.alert = nil
      return .none
    }
  }
}
