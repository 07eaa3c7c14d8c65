import AsyncCoreExampleSupport

/// A command typed at the counter's prompt or given on its command line.
///
/// ```swift
/// try CounterCommand.parse("+ + step 5 -")
/// // [.send(.increment), .send(.increment), .send(.setStep(5)), .send(.decrement)]
/// ```
public enum CounterCommand: Sendable, Equatable {
  /// An action for the core.
  case send(CounterAction)
  /// Ends the session.
  case quit

  /// The largest step `step N` accepts: the count stays far from overflowing.
  public static let maximumStep = 1_000

  /// How the commands are written, for help and error messages.
  public static let help = "+ adds the step, - takes it away, step N sets it (1 to 1000), reset, q quits"

  /// The commands in `line`, separated by spaces: `+`, `-`, `step N`,
  /// `reset`, `q`.
  ///
  /// - Throws: ``CounterCommandError`` naming the first word that is not a
  ///   command; none of the line's commands is returned then.
  public static func parse(_ line: String) throws(CounterCommandError) -> [CounterCommand] {
    var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).makeIterator()
    var commands: [CounterCommand] = []
    while let word = words.next() {
      switch word {
      case "+": commands.append(.send(.increment))
      case "-": commands.append(.send(.decrement))
      case "reset": commands.append(.send(.reset))
      case "q", "quit": commands.append(.quit)
      case "step":
        guard let text = words.next() else { throw .missingStep }
        guard let step = Int(text), (1...maximumStep).contains(step) else { throw .invalidStep(String(text)) }
        commands.append(.send(.setStep(step)))
      default:
        throw .unknown(String(word))
      }
    }
    return commands
  }

  /// How the command is typed, for the transcript: `+`, `step 5`, `q`.
  public var text: String {
    switch self {
    case .send(.increment): "+"
    case .send(.decrement): "-"
    case .send(.setStep(let step)): "step \(step)"
    case .send(.reset): "reset"
    case .quit: "q"
    }
  }
}

/// A line that is not a list of ``CounterCommand``s. Its description
/// quotes the word at fault with control characters escaped and its length
/// bounded, as it is echoed.
public enum CounterCommandError: Error, Sendable, Equatable, CustomStringConvertible {
  /// A word that is no command.
  case unknown(String)
  /// `step` at the end of the line.
  case missingStep
  /// `step` followed by something other than a whole number from 1 to 1000.
  case invalidStep(String)

  public var description: String {
    switch self {
    case .unknown(let word): "unknown command \"\(word.escapedForTerminal())\" (\(CounterCommand.help))"
    case .missingStep: "step needs a number: step 5"
    case .invalidStep(let text):
      "step must be a whole number from 1 to \(CounterCommand.maximumStep), not \"\(text.escapedForTerminal())\""
    }
  }
}
