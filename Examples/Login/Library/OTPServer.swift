import AsyncCore

/// The login's network worker: it sends a one-time code by SMS and checks
/// the code the user typed. Effects reach it as `send.dependencies.otpServer`.
///
/// ```swift
/// return .run { send in
///   try await send.dependencies.otpServer.sendCode(to: phone)
///   await send(.codeSent(phone: phone))
/// }
/// ```
public protocol OTPServer: Sendable {
  /// Sends a new code to `phone`; the codes sent before stop working.
  func sendCode(to phone: String) async throws

  /// Whether `code` is the code last sent to `phone`. A right code works
  /// once.
  ///
  /// - Throws: ``OTPServerError`` when there is no code to check against.
  func verify(_ code: String, for phone: String) async throws -> Bool
}

/// What the server answers instead of checking a code.
public enum OTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Too many wrong codes: the code no longer works, a new one is needed.
  case tooManyAttempts
  /// No code was sent to this number, or it was used or given up.
  case noCode

  public var description: String {
    switch self {
    case .tooManyAttempts: "Too many wrong codes: this one no longer works. Type resend for a new one."
    case .noCode: "There is no code to check for this number. Type resend for a new one."
    }
  }
}

/// The key of the ``OTPServer`` dependency. It has no default: a core whose
/// effects reach the network must be given a server (a fake in tests and in
/// this example), or it stops with a message naming the key.
public enum OTPServerKey: DependencyKey {
  public typealias Value = any OTPServer
}

extension Dependencies {
  /// The login's network worker.
  ///
  /// ```swift
  /// let dependencies = Dependencies { $0.otpServer = FakeOTPServer(latency: .seconds(1)) }
  /// ```
  public var otpServer: any OTPServer {
    get { self[OTPServerKey.self] }
    set { self[OTPServerKey.self] = newValue }
  }
}
