import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreNavigation

/// The command line: `PropertySearch [--latency SECONDS] [--offline] [LINK…] [COMMAND…]`
/// (the main handles `PropertySearch inspect …` before this).
///
/// ```swift
/// let options = try PropertySearchOptions(arguments: ["--latency", "0", "asynccore://property/42", "back"])
/// // options.lines == ["asynccore://property/42", "back"], options.readsStandardInput == false
/// ```
///
/// Arguments other than options are lines, run in order as if typed: links
/// (checked here, so a bad one stops the program before it starts) and
/// commands (`report FILE` may be one argument or two). Given only links,
/// the program opens them, then reads standard input; given a command, it
/// runs the lines and exits.
public struct PropertySearchOptions: Sendable, Equatable {
  /// How long each request to the fake API takes.
  public var latency: Duration = .milliseconds(500)
  /// Whether the fake API fails every request.
  public var isOffline = false
  /// The links and commands given, in order.
  public var lines: [String] = []
  /// `-h` or `--help` was given.
  public var showsHelp = false

  public static let usage = """
    usage: PropertySearch [--latency SECONDS] [--offline] [LINK…] [COMMAND…]
           PropertySearch inspect INSPECTOR-COMMAND FILE…
      --latency S   how long each request to the fake property API takes, 0 to 3600 seconds (default 0.5)
      --offline     every request fails, as with no network
      LINK          a link, opened as if typed: asynccore://search?place=Leeds,
                    asynccore://property/42, asynccore://search/property/42?place=Leeds
      COMMAND       a place, a result's number, back, report FILE, q
    Links and commands run in the order given, then the program exits; given only links,
    it goes on with commands from standard input. While a request runs, what is typed waits
    for its answer (q too); Ctrl-C quits at once.
    report FILE writes a bug report of the session so far (its actions and states, as JSON);
    inspect reads one: PropertySearch inspect list FILE, state FILE --at N, diff FILE --from N --to M,
    html FILE -o PAGE.html (PropertySearch inspect --help: all of them).
    """

  /// Why the command line was refused. What it quotes of the arguments is
  /// escaped and bounded.
  public enum Invalid: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option that does not exist, or a wrong value.
    case option(String)
    /// A link the app cannot read.
    case link(DeepLinkError)

    public var description: String {
      switch self {
      case .option(let problem): problem
      // A DeepLinkError's text quotes the link.
      case .link(let error): "cannot open the link: \("\(error)".escapedForTerminal(limit: EchoLimit.message))"
      }
    }
  }

  /// Whether standard input is read after the arguments' lines: when they
  /// are all links (or none).
  public var readsStandardInput: Bool { lines.allSatisfy(Self.isLink) }

  static func isLink(_ line: String) -> Bool { line.contains("://") }

  public init(arguments: [String]) throws(Invalid) {
    var arguments = arguments.makeIterator()
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
      case _ where argument.lowercased() == "report":
        // `report FILE` as two arguments: one line, as if typed.
        guard let file = arguments.next() else { throw .option("report needs a file: report FILE") }
        lines.append("report \(file)")
      default:
        if argument.hasPrefix("--") { throw .option("unknown option \(argument.escapedForTerminal())") }
        if Self.isLink(argument) {
          do {
            _ = try PropertySearch.links.routes(for: argument)
          } catch {
            throw .link(error)
          }
        }
        lines.append(argument)
      }
    }
  }
}
