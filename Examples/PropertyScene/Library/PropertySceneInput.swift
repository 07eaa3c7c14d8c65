import AsyncCoreExampleSupport

/// What a line typed at the scene's prompt means on the screen shown: the
/// events of that screen's view.
///
/// ```swift
/// PropertySceneInput("save", on: .property)                  // .send(.toggleFavourite)
/// PropertySceneInput("save", on: .viewing(title: "Loft"))    // .refused("? save is not on the viewings screen: …")
/// PropertySceneInput("q", on: .property)                     // .quit
/// ```
///
/// As in an app, where a screen the navigator covered cannot be tapped,
/// a command acts only on the screen shown: the property's takes save,
/// contact, book and back; the contact form and the viewings, which the
/// navigator opened over it, take back. A command of another screen is
/// refused with a line saying so, and the logic never sees it. Both that
/// line and the one for a word that is no command name only what the
/// screen shown takes (``hint(on:)``).
public enum PropertySceneInput: Sendable, Equatable {
  /// An event for the scene's logic.
  case send(PropertyLogicAction)
  /// Ends the session.
  case quit
  /// Nothing to do.
  case ignore
  /// Not a command: the text, trimmed.
  case unknown(String)
  /// A command of another screen than the one shown: the line saying so.
  case refused(String)

  /// What the screen of `route` takes, as the end of a line saying what
  /// to type: only its own commands (once the scene is closed, that it is).
  ///
  /// ```swift
  /// PropertySceneInput.hint(on: .viewing(title: "Loft"))   // "type back to return to the property, or q."
  /// ```
  public static func hint(on route: PropertySceneRoute) -> String {
    switch route {
    case .property: "type save, contact, book, back, or q."
    case .contact, .viewing: "type back to return to the property, or q."
    case .closed: "the scene is closed."
    }
  }

  /// What the session writes for a word that is no command, typed while
  /// `route`'s screen is shown; the text is quoted escaped and bounded.
  public static func unknownLine(_ text: String, on route: PropertySceneRoute) -> String {
    let word = "\"\(text.escapedForTerminal())\""
    return switch route {
    case .property, .closed: "? \(word) is not a command: \(hint(on: route))"
    case .contact: "? \(word) is not a command on the contact form: \(hint(on: route))"
    case .viewing: "? \(word) is not a command on the viewings screen: \(hint(on: route))"
    }
  }

  /// What the session writes for `command` typed while `route`'s screen is
  /// shown, which has nothing for it.
  public static func refusal(_ command: String, on route: PropertySceneRoute) -> String {
    switch route {
    case .property: "? \(command) is not on the property's screen: \(hint(on: route))"
    case .contact: "? \(command) is not on the contact form: \(hint(on: route))"
    case .viewing: "? \(command) is not on the viewings screen: \(hint(on: route))"
    case .closed: "? \(command): \(hint(on: route))"
    }
  }

  /// The commands and the view events they are.
  private static let events: [String: PropertyLogicAction] = [
    "save": .toggleFavourite, "contact": .contactTapped, "book": .bookViewingTapped, "back": .backTapped,
  ]

  /// What `line` means while `route`'s screen is shown.
  public init(_ line: String, on route: PropertySceneRoute) {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    let text = String(line.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    switch text.lowercased() {
    case "": self = .ignore
    case "q", "quit": self = .quit
    case let command:
      guard let event = Self.events[command] else {
        self = .unknown(text)
        return
      }
      self = Self.screen(route, has: event) ? .send(event) : .refused(Self.refusal(command, on: route))
    }
  }

  /// Whether the screen of `route` has a control for `event`.
  private static func screen(_ route: PropertySceneRoute, has event: PropertyLogicAction) -> Bool {
    switch route {
    case .property: true
    case .contact, .viewing: event == .backTapped
    case .closed: false
    }
  }
}
