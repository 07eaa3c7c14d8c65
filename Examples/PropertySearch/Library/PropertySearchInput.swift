import AsyncCoreExampleSupport

/// What a line typed at the prompt means on the screen shown.
///
/// ```swift
/// PropertySearchInput("Leeds", on: PropertySearch())              // .send(.search(place: "Leeds"))
/// PropertySearchInput("2", on: stateShowingResults)              // .send(.results(.select(number: 2)))
/// PropertySearchInput("asynccore://property/42", on: anyState)   // .send(.openLink("asynccore://property/42"))
/// PropertySearchInput("report bug.json", on: anyState)           // .report(path: "bug.json")
/// ```
///
/// - `q` (or `quit`) quits; `back` goes back a screen, and is refused on the
///   search prompt, which has none to go back to; an empty line does
///   nothing.
/// - `report FILE` writes a bug report of the session to FILE
///   (``BugReport``); `report` alone is refused.
/// - A line with `://` is a link.
/// - On the results screen, a number opens that row; on the other screens,
///   which list no results, a number is refused (no place is a number).
/// - Anything else is a place to search, from any screen.
public enum PropertySearchInput: Sendable, Equatable {
  /// An action for the core.
  case send(PropertySearchAction)
  /// Ends the session.
  case quit
  /// Nothing to do.
  case ignore
  /// A command the screen shown has nothing for: the line saying so.
  case refused(String)
  /// Writes a bug report of the session to `path`.
  case report(path: String)

  /// The line for `back` on the search prompt.
  public static let nothingToGoBackTo = "? There is no screen to go back to: type a place, a link, or q."

  /// The line for a number typed on a screen that lists no results: the
  /// search prompt or a property's detail.
  ///
  /// ```swift
  /// PropertySearchInput("9", on: stateShowingADetail)
  /// // .refused("? A number opens a home on a results list, and none is shown: type back, another place, or q.")
  /// ```
  public static func numberWithoutResults(on state: PropertySearch) -> String {
    let hint = state.stack.top == nil ? "type a place, a link, or q." : "type back, another place, or q."
    return "? A number opens a home on a results list, and none is shown: \(hint)"
  }

  public init(_ line: String, on state: PropertySearch) {
    let text = line.trimmingWhitespace()
    switch text.lowercased() {
    case "": self = .ignore
    case "q", "quit": self = .quit
    case "back": self = state.stack.top == nil ? .refused(Self.nothingToGoBackTo) : .send(.navigation(.pop))
    default:
      if let command = BugReport.Command(text) {
        switch command {
        case .write(let path): self = .report(path: path)
        case .missingPath: self = .refused(BugReport.Command.usage)
        }
      } else if text.contains("://") {
        self = .send(.openLink(text))
      } else if let number = Int(text) {
        if case .results? = state.stack.top {
          self = .send(.results(.select(number: number)))
        } else {
          self = .refused(Self.numberWithoutResults(on: state))
        }
      } else {
        self = .send(.search(place: text))
      }
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
