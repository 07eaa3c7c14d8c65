import AsyncCoreExampleSupport

/// The command line: `Login [--code CODE] [--latency SECONDS] [--countdown SECONDS]` (the main
/// handles `Login inspect …` before this).
///
/// ```swift
/// let options = try LoginOptions(arguments: ["--code", "424242", "--latency", "0.2"])
/// // options.code == "424242", options.latency == .milliseconds(200)
/// ```
public struct LoginOptions: Sendable, Equatable {
  /// The code the fake server sends every time; `nil`: a random one each time.
  public var code: String?
  /// How long each request to the fake server takes.
  public var latency: Duration = .seconds(1)
  /// Seconds before a new code may be asked for.
  public var countdown = CodeEntry.countdownSeconds
  /// `-h` or `--help` was given.
  public var showsHelp = false

  public static let usage = """
    usage: Login [--code CODE] [--latency SECONDS] [--countdown SECONDS]
           Login inspect INSPECTOR-COMMAND FILE…
      --code CODE     the fake server sends this 6-digit code each time (default: a random code each time)
      --latency S     how long each request to the fake server takes, 0 to 3600 seconds (default 1)
      --countdown S   seconds before a new code may be asked for, 1 to 3600 (default 60)
    Type a phone number, then the code from the fake SMS shown on the screen; resend, back, q.
    While a request runs, what is typed waits for its answer (q too); Ctrl-C quits at once.
    report FILE, typed on any screen, writes a bug report of the session so far (its actions and
    states, as JSON); inspect reads one: Login inspect list FILE, state FILE --at N,
    diff FILE --from N --to M, html FILE -o PAGE.html (Login inspect --help: all of them).
    """

  /// Options that are not valid, with what is wrong.
  public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(description: String) {
      self.description = description
    }
  }

  public init(arguments: [String]) throws(Invalid) {
    var arguments = arguments.makeIterator()
    while let option = arguments.next() {
      if option == "-h" || option == "--help" {
        showsHelp = true
        continue
      }
      guard ["--code", "--latency", "--countdown"].contains(option) else {
        throw Invalid(description: "unknown option \(option.escapedForTerminal())")
      }
      guard let value = arguments.next() else { throw Invalid(description: "\(option) needs a value") }
      if option == "--code" {
        guard value.count == CodeEntry.codeLength, value.allSatisfy({ $0.isASCII && $0.isNumber }) else {
          throw Invalid(
            description: "--code takes \(CodeEntry.codeLength) digits, not \"\(value.escapedForTerminal())\"")
        }
        code = value
      } else if option == "--countdown" {
        guard let seconds = Int(value), (1...3_600).contains(seconds) else {
          throw Invalid(
            description:
              "--countdown takes a whole number of seconds from 1 to 3600, not \"\(value.escapedForTerminal())\"")
        }
        countdown = seconds
      } else {
        guard let seconds = Double(value), (0...3_600).contains(seconds) else {
          throw Invalid(
            description: "--latency takes a number of seconds from 0 to 3600, not \"\(value.escapedForTerminal())\"")
        }
        latency = .seconds(seconds)
      }
    }
  }
}
