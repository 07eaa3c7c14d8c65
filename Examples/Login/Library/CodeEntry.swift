import AsyncCore
import AsyncCoreExampleSupport

/// The code screen's state: the code sent by SMS, checked by the server,
/// and a countdown before a new code may be asked for.
///
/// ```swift
/// await store.send(.code(.submit("424242"))) {
///   $0.codeEntry?.code = "424242"
///   $0.codeEntry?.loading = .verifying
/// }
/// ```
public struct CodeEntry: Sendable, Equatable, Codable {
  /// What the screen waits for.
  public enum Loading: Sendable, Equatable, Codable {
    /// The server checks the code.
    case verifying
    /// The server sends a new code.
    case resending
  }

  /// The number the code was sent to.
  public let phone: String
  /// The code last submitted.
  public var code: String
  /// Seconds until a new code may be asked for; 0 once it may.
  public var secondsLeft: Int
  /// The request running, if any: the loading indicator.
  public var loading: Loading?
  /// The last error: a wrong code, a refused resend, the server's error.
  public var error: String?
  /// Seconds each countdown runs, this one and a resent code's.
  public let countdownLength: Int

  /// The screen as it opens: a code was just sent, the countdown is full.
  public init(
    phone: String, code: String = "", secondsLeft: Int? = nil, loading: Loading? = nil, error: String? = nil,
    countdownLength: Int = CodeEntry.countdownSeconds
  ) {
    self.phone = phone
    self.code = code
    self.countdownLength = countdownLength
    self.secondsLeft = secondsLeft ?? countdownLength
    self.loading = loading
    self.error = error
  }

  /// Whether a request runs.
  public var isLoading: Bool { loading != nil }
}

/// What happens on the code screen.
public enum CodeAction: Sendable, Equatable, Codable {
  /// Starts the countdown; sent by the coordinator as the screen opens.
  case startCountdown
  /// A second of the countdown has passed.
  case tick
  /// The user typed a code and pressed Enter.
  case submit(String)
  /// The server accepted the code: the coordinator goes home.
  case codeAccepted
  /// The server said the code is wrong.
  case codeRejected
  /// The user asks for a new code.
  case resend
  /// The server sent a new code.
  case codeResent
  /// The server answered with an error.
  case failed(String)
}

extension CodeEntry {
  /// How long the user waits before a new code may be sent, unless
  /// ``Login/countdownLength`` says otherwise.
  public static let countdownSeconds = 60
  /// Digits in a code.
  public static let codeLength = 6

  /// The error for a code typed with the wrong shape; the code is quoted
  /// as it is echoed: escaped, and bounded.
  public static func malformed(_ code: String) -> String {
    "\"\(code.escapedForTerminal())\" is not a code: a code is \(codeLength) digits."
  }

  /// The error for a code the server rejected.
  public static func wrong(_ code: String) -> String {
    "\(code) is not the code we sent. Check the SMS and try again."
  }

  /// The error for a resend before the countdown ended.
  public static let tooEarly = "A new code can be sent when the countdown ends."

  /// The countdown's effect: a tick a second, on the core's clock, until
  /// it ends or is cancelled. Starting it again cancels the one running.
  struct CountdownID: Hashable, Sendable {}

  /// The code screen. Resending is refused while the countdown runs; the
  /// countdown is cancelled with the screen (``Login/reducer`` removes it).
  public static let reducer = Reduce<CodeEntry, CodeAction> { state, action in
    switch action {
    case .startCountdown:
      return countdown(seconds: state.secondsLeft)
    case .tick:
      state.secondsLeft = max(0, state.secondsLeft - 1)
      return .none
    case .submit(let text):
      guard state.loading == nil else { return .none }  // one request at a time
      let code = text.filter { $0 != " " && $0 != "\t" && $0 != "\r" }
      guard code.count == codeLength, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
        state.error = malformed(code)
        return .none
      }
      state.code = code
      state.loading = .verifying
      state.error = nil
      return .run { [phone = state.phone] send in
        let accepted = try await send.dependencies.otpServer.verify(code, for: phone)
        await send(accepted ? .codeAccepted : .codeRejected)
      } catch: { error, send in
        await send(.failed("\(error)"))
      }
    case .codeAccepted:
      state.loading = nil
      return .none
    case .codeRejected:
      state.loading = nil
      state.error = wrong(state.code)
      return .none
    case .resend:
      guard state.loading == nil else { return .none }
      guard state.secondsLeft == 0 else {
        state.error = tooEarly
        return .none
      }
      state.loading = .resending
      state.error = nil
      return .run { [phone = state.phone] send in
        try await send.dependencies.otpServer.sendCode(to: phone)
        await send(.codeResent)
      } catch: { error, send in
        await send(.failed("\(error)"))
      }
    case .codeResent:
      state.loading = nil
      state.code = ""
      state.secondsLeft = state.countdownLength
      return countdown(seconds: state.countdownLength)
    case .failed(let message):
      state.loading = nil
      state.error = message
      return .none
    }
  }

  private static func countdown(seconds: Int) -> Effect<CodeAction> {
    .run { send in
      for _ in 0..<seconds {
        try await send.clock.sleep(for: .seconds(1))
        await send(.tick)
      }
    }
    .cancellable(id: CountdownID(), cancelInFlight: true)
  }
}
