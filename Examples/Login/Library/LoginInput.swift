import AsyncCoreExampleSupport

/// What a line typed at the login's prompt means on the screen shown.
///
/// ```swift
/// LoginInput("555 0100", on: Login())                 // .send(.phone(.submit("555 0100")))
/// LoginInput("resend", on: loginOnTheCodeScreen)     // .send(.code(.resend))
/// LoginInput("q", on: anyLogin)                      // .quit
/// LoginInput("report bug.json", on: anyLogin)        // .report(path: "bug.json")
/// ```
///
/// - On the phone screen, a line is a phone number.
/// - On the code screen, `resend` asks for a new code, `back` goes back to
///   the phone screen, anything else is a code.
/// - Home, only `q` does something.
/// - `q` (or `quit`) quits anywhere; an empty line does nothing.
/// - `report FILE` writes a bug report of the session to FILE, anywhere
///   (``BugReport``); `report` alone is refused.
public enum LoginInput: Sendable, Equatable {
  /// An action for the core.
  case send(LoginAction)
  /// Ends the session.
  case quit
  /// Nothing to do.
  case ignore
  /// Writes a bug report of the session to `path`.
  case report(path: String)
  /// A command that cannot run: the line saying why.
  case refused(String)

  public init(_ line: String, on state: Login) {
    let text = line.trimmingWhitespace()
    if let command = BugReport.Command(text) {
      switch command {
      case .write(let path): self = .report(path: path)
      case .missingPath: self = .refused(BugReport.Command.usage)
      }
      return
    }
    switch text.lowercased() {
    case "": self = .ignore
    case "q", "quit": self = .quit
    case let command:
      switch state.stack.top {
      case nil: self = .send(.phone(.submit(text)))
      case .code?:
        switch command {
        case "resend": self = .send(.code(.resend))
        case "back": self = .send(.navigation(.pop))
        default: self = .send(.code(.submit(text)))
        }
      case .home?: self = .ignore
      }
    }
  }
}
