/// What a line typed at the scene's prompt means: the view's events.
///
/// ```swift
/// PropertySceneInput("save")   // .send(.toggleFavourite)
/// PropertySceneInput("q")      // .quit
/// ```
public enum PropertySceneInput: Sendable, Equatable {
  /// An event for the scene's logic.
  case send(PropertyLogicAction)
  /// Ends the session.
  case quit
  /// Nothing to do.
  case ignore
  /// Not a command: the text, trimmed.
  case unknown(String)

  /// What the session writes for an unknown command.
  public static func unknownLine(_ text: String) -> String {
    "? \"\(text)\" is not a command: type save, contact, book, back, or q."
  }

  public init(_ line: String) {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    let text = String(line.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    switch text.lowercased() {
    case "": self = .ignore
    case "q", "quit": self = .quit
    case "save": self = .send(.toggleFavourite)
    case "contact": self = .send(.contactTapped)
    case "book": self = .send(.bookViewingTapped)
    case "back": self = .send(.backTapped)
    default: self = .unknown(text)
    }
  }
}
