import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreNavigation
import AsyncCorePropertySearchExample

/// The command line: `PropertyScene [--latency SECONDS] [--offline] [ID | LINK] [COMMAND…]`.
///
/// ```swift
/// let options = try PropertySceneOptions(arguments: ["asynccore://property/43", "save", "q"])
/// // options.propertyID == 43, options.commands == ["save", "q"]
/// ```
///
/// The property is a number or a property link (read with the property
/// search's ``PropertySearch/links``); 42 by default. Given commands, the
/// program runs them and exits; without, it reads standard input.
public struct PropertySceneOptions: Sendable, Equatable {
  /// The property the scene shows.
  public var propertyID = 42
  /// How long each request to a fake worker takes.
  public var latency: Duration = .milliseconds(300)
  /// Whether the fake property API fails every request.
  public var isOffline = false
  /// The commands given, in order.
  public var commands: [String] = []
  /// `-h` or `--help` was given.
  public var showsHelp = false

  public static let usage = """
    usage: PropertyScene [--latency SECONDS] [--offline] [ID | LINK] [COMMAND…]
      --latency S   how long each request to a fake worker takes, 0 to 3600 seconds (default 0.3)
      --offline     the property API fails every request
      ID, LINK      the property: 42 (the default) or asynccore://property/42
      COMMAND       save, contact, book, back, q: run in order, then the program exits
    Without commands, reads them from standard input. While a request runs, what is typed
    waits for its answer (q too); Ctrl-C quits at once.
    """

  /// Why the command line was refused. What it quotes of the arguments is
  /// escaped and bounded.
  public enum Invalid: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option that does not exist, or a wrong value.
    case option(String)
    /// A link the app cannot read.
    case link(DeepLinkError)
    /// A link that reads, but not to one property.
    case notAProperty(String)

    public var description: String {
      switch self {
      case .option(let problem): problem
      // A DeepLinkError's text quotes the link.
      case .link(let error): "cannot open the link: \("\(error)".escapedForTerminal(limit: EchoLimit.message))"
      case .notAProperty(let link): "\(link.escapedForTerminal()) does not open one property"
      }
    }
  }

  public init(arguments: [String]) throws(Invalid) {
    var arguments = arguments.makeIterator()
    var sawProperty = false
    while let argument = arguments.next() {
      switch argument {
      case "-h", "--help":
        showsHelp = true
      case "--offline":
        isOffline = true
      case "--latency":
        guard let value = arguments.next() else { throw .option("--latency needs a value") }
        guard let seconds = Double(value), (0...3_600).contains(seconds) else {
          throw .option("--latency takes a number of seconds from 0 to 3600, not \"\(value.escapedForTerminal())\"")
        }
        latency = .seconds(seconds)
      default:
        if argument.hasPrefix("--") { throw .option("unknown option \(argument.escapedForTerminal())") }
        if !sawProperty && commands.isEmpty, let id = try Self.property(in: argument) {
          propertyID = id
          sawProperty = true
        } else {
          commands.append(argument)
        }
      }
    }
  }

  /// The property `argument` names, as a number or a link; `nil` for a
  /// command.
  private static func property(in argument: String) throws(Invalid) -> Int? {
    if let id = Int(argument) { return id }
    guard argument.contains("://") else { return nil }
    let routes: [PropertyRoute]
    do {
      routes = try PropertySearch.links.routes(for: argument)
    } catch {
      throw .link(error)
    }
    guard routes.count == 1, case .property(let id) = routes[0] else { throw .notAProperty(argument) }
    return id
  }
}
