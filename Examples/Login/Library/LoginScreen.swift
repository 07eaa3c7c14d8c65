import AsyncCoreExampleSupport

/// What the terminal shows for a state: the current screen's lines, made
/// from the state alone (and the fake server's last SMS), so a test reads
/// the same screen the program draws. What the user typed is shown
/// escaped and bounded, as everywhere an example echoes input.
///
/// ```swift
/// LoginScreen(Login()).lines
/// // ["AsyncCore · one-time password login", "Phone", "",
/// //  "  Phone number:", "", "",
/// //  "  Type a phone number, then Enter. report FILE writes a bug report; q quits."]
/// ```
///
/// The code screen:
///
/// ```text
/// AsyncCore · one-time password login
/// Phone › Code
///
///   We sent a 6-digit code to 555 0100.
///   Resend in 0:42
///   ! 123456 is not the code we sent. Check the SMS and try again.
///
///   [fake SMS to 555 0100] Your AsyncCore code is 424242
///   Type the code and press Enter, or resend, back, q.
/// ```
public struct LoginScreen: Sendable, Equatable {
  /// The lines, without the prompt.
  public var lines: [String]
  /// The index of the line that changes each second by itself (the
  /// countdown), which a terminal redraws alone, leaving what the user is
  /// typing in place.
  public var countdownLine: Int?

  /// The program's title, the screen's first line.
  public static let title = "AsyncCore · one-time password login"

  /// The screen for `state`; `sms` is the last SMS the fake server sent,
  /// shown on the code screen of the number it went to.
  public init(_ state: Login, sms: SMS? = nil) {
    let trail =
      ["Phone"]
      + state.stack.routes.map { route in
        switch route {
        case .code: "Code"
        case .home: "Home"
        }
      }
    var lines = [Self.title, trail.joined(separator: " › "), ""]
    var countdownLine: Int?
    switch state.stack.top {
    case nil:
      let entry = state.phoneEntry
      let number = entry.number.escapedForTerminal()
      lines.append("  Phone number: \(number)".trimmingTrailingSpaces())
      lines.append(entry.isLoading ? "  … sending a code to \(number)" : Self.errorLine(entry.error))
      lines.append("")
      lines.append("  Type a phone number, then Enter. report FILE writes a bug report; q quits.")
    case .code(let phone)?:
      let entry = state.codeEntry ?? CodeEntry(phone: phone)
      let shownPhone = phone.escapedForTerminal()
      lines.append("  We sent a \(CodeEntry.codeLength)-digit code to \(shownPhone).")
      countdownLine = lines.count
      lines.append(
        entry.secondsLeft > 0
          ? "  Resend in \(Self.minutesAndSeconds(entry.secondsLeft))" : "  No code? Type resend for a new one.")
      switch entry.loading {
      case .verifying?: lines.append("  … checking \(entry.code.escapedForTerminal())")
      case .resending?: lines.append("  … sending a new code to \(shownPhone)")
      case nil: lines.append(Self.errorLine(entry.error))
      }
      lines.append("")
      if let sms, sms.to == phone {
        lines.append("  [fake SMS to \(shownPhone)] \(sms.text.escapedForTerminal(limit: EchoLimit.message))")
      }
      lines.append("  Type the code and press Enter, or resend, back, q.")
    case .home(let phone)?:
      lines.append("  Welcome home! You are signed in as \(phone.escapedForTerminal()).")
      lines.append("")
      lines.append("  q quits.")
    }
    self.lines = lines
    self.countdownLine = countdownLine
  }

  /// `0:42`, `1:00`.
  static func minutesAndSeconds(_ seconds: Int) -> String {
    let rest = seconds % 60
    return "\(seconds / 60):\(rest < 10 ? "0" : "")\(rest)"
  }

  private static func errorLine(_ error: String?) -> String {
    error.map { "  ! \($0.escapedForTerminal(limit: EchoLimit.message))" } ?? ""
  }
}

extension String {
  func trimmingTrailingSpaces() -> String {
    guard let last = lastIndex(where: { $0 != " " }) else { return "" }
    return String(self[...last])
  }
}
