/// A text message the fake server "sends".
public struct SMS: Sendable, Equatable {
  /// The phone number it went to.
  public var to: String
  /// What it says.
  public var text: String

  public init(to: String, text: String) {
    self.to = to
    self.text = text
  }
}

/// An ``OTPServer`` that runs in the process: each request waits `latency`
/// on `clock`, as a network would, and a sent code is "delivered" by
/// calling `deliver` with the SMS (the terminal shows it, a test reads it).
///
/// ```swift
/// let clock = ManualClock()   // in a test: import AsyncCoreTesting
/// let server = FakeOTPServer(latency: .milliseconds(800), clock: clock, codes: { _ in "424242" })
/// let store = TestCore(
///   initialState: Login(), dependencies: Dependencies { $0.otpServer = server }, clock: clock,
///   reducer: Login.reducer)
/// ```
///
/// Its latency runs on the clock it is given, which is the core's in the
/// program and in tests, so a test moves the network and the countdown with
/// one `ManualClock`. (The latency belongs to the fake network, not to the
/// feature: the feature's effects only call the server.)
///
/// Codes behave as a real server's would: a new code replaces the one
/// before, a right code works once, and after ``maximumWrongAttempts``
/// wrong ones the code is given up (``OTPServerError/tooManyAttempts``).
public actor FakeOTPServer: OTPServer {
  /// Wrong codes after which a code no longer works.
  public static let maximumWrongAttempts = 3

  private struct Issued {
    var code: String
    var wrongAttempts = 0
  }

  private let latency: Duration
  private let clock: any Clock<Duration>
  private let makeCode: @Sendable (_ index: Int) -> String
  private let deliver: @Sendable (SMS) async -> Void
  private var issued: [String: Issued] = [:]

  /// Every SMS sent so far, the newest last.
  public private(set) var outbox: [SMS] = []

  /// A server whose requests take `latency` on `clock`.
  ///
  /// - Parameters:
  ///   - codes: The code to send, given how many were sent before (0 for
  ///     the first); by default a random one each time.
  ///   - deliver: Receives each SMS once it is sent, before the request
  ///     returns.
  public init(
    latency: Duration,
    clock: any Clock<Duration> = ContinuousClock(),
    codes: @escaping @Sendable (_ index: Int) -> String = { _ in FakeOTPServer.randomCode() },
    deliver: @escaping @Sendable (SMS) async -> Void = { _ in }
  ) {
    self.latency = latency
    self.clock = clock
    self.makeCode = codes
    self.deliver = deliver
  }

  /// Six random digits: `"042917"`.
  public static func randomCode() -> String {
    let number = String(Int.random(in: 0..<1_000_000))
    return String(repeating: "0", count: 6 - number.count) + number
  }

  /// The text of the SMS that carries `code`.
  public static func message(for code: String) -> String {
    "Your AsyncCore code is \(code)"
  }

  public func sendCode(to phone: String) async throws {
    try await clock.sleep(for: latency)
    let code = makeCode(outbox.count)
    issued[phone] = Issued(code: code)
    let sms = SMS(to: phone, text: Self.message(for: code))
    outbox.append(sms)
    await deliver(sms)
  }

  public func verify(_ code: String, for phone: String) async throws -> Bool {
    try await clock.sleep(for: latency)
    guard var entry = issued[phone] else { throw OTPServerError.noCode }
    if entry.code == code {
      issued[phone] = nil  // a code works once
      return true
    }
    entry.wrongAttempts += 1
    if entry.wrongAttempts >= Self.maximumWrongAttempts {
      issued[phone] = nil
      throw OTPServerError.tooManyAttempts
    }
    issued[phone] = entry
    return false
  }
}
