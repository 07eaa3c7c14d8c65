import AsyncCore
import AsyncCoreExampleSupport

/// The first screen's state: the phone number to send a code to.
///
/// ```swift
/// let store = TestCore(initialState: PhoneEntry(), dependencies: dependencies, reducer: PhoneEntry.reducer)
/// await store.send(.submit("555 0100")) {
///   $0.number = "555 0100"
///   $0.isLoading = true
/// }
/// ```
public struct PhoneEntry: Sendable, Equatable, Codable {
  /// The number last submitted, as typed (trimmed).
  public var number: String
  /// Whether a code is being sent: the loading indicator.
  public var isLoading: Bool
  /// Why the number was refused, or the server's error.
  public var error: String?

  public init(number: String = "", isLoading: Bool = false, error: String? = nil) {
    self.number = number
    self.isLoading = isLoading
    self.error = error
  }
}

/// What happens on the phone screen.
public enum PhoneAction: Sendable, Equatable, Codable {
  /// The user typed a number and pressed Enter.
  case submit(String)
  /// The server sent a code to `phone`: the coordinator opens the code screen.
  case codeSent(phone: String)
  /// The server could not send a code.
  case failed(String)
}

extension PhoneEntry {
  /// Digits a phone number may have, the country code included (E.164 allows 15).
  public static let digitCount = 7...15

  /// Why `number` is not a phone number, or `nil` if it is one: 7 to 15
  /// digits, with spaces, `+`, `-`, `.`, `(` and `)` allowed between them.
  /// The number is quoted as it is echoed: escaped, and bounded.
  ///
  /// ```swift
  /// PhoneEntry.problem(with: "+1 (555) 010-0100")  // nil
  /// PhoneEntry.problem(with: "555")                // "555" has 3 digits: a phone number has 7 to 15.
  /// ```
  public static func problem(with number: String) -> String? {
    if number.isEmpty { return "Type a phone number first." }
    let shown = number.escapedForTerminal()
    if let other = number.first(where: { !$0.isASCII || !($0.isNumber || " +-.()".contains($0)) }) {
      return "\"\(shown)\" is not a phone number: it has \"\(String(other).escapedForTerminal())\" in it."
    }
    let digits = number.count(where: \.isNumber)
    if !digitCount.contains(digits) {
      return
        "\"\(shown)\" has \(digits) digits: a phone number has \(digitCount.lowerBound) to \(digitCount.upperBound)."
    }
    return nil
  }

  /// The phone screen: a number is checked here, then sent to the server,
  /// which sends a code by SMS.
  public static let reducer = Reduce<PhoneEntry, PhoneAction> { state, action in
    switch action {
    case .submit(let text):
      guard !state.isLoading else { return .none }  // one request at a time
      let number = text.trimmingWhitespace()
      state.number = number
      if let problem = problem(with: number) {
        state.error = problem
        return .none
      }
      state.isLoading = true
      state.error = nil
      return .run { send in
        try await send.dependencies.otpServer.sendCode(to: number)
        await send(.codeSent(phone: number))
      } catch: { error, send in
        await send(.failed("\(error)"))
      }
    case .codeSent:
      state.isLoading = false
      return .none
    case .failed(let message):
      state.isLoading = false
      state.error = message
      return .none
    }
  }
}

extension String {
  /// The string without spaces and tabs at either end.
  func trimmingWhitespace() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
      return ""
    }
    return String(self[first...last])
  }
}
