import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The inspector, as a library: your own small executable calls it with
/// your state, action and reducer, and gets every command, the ones that
/// replay included.
///
/// ```swift
/// // Sources/inspect/main.swift, an executable target of your package
/// import AsyncCoreJournal
/// import Glibc
///
/// exit(Inspector.run(Array(CommandLine.arguments.dropFirst()), initialState: AppState(), reducer: appReducer))
/// ```
///
/// Each command takes a journal's directory or a recording's file (a bug
/// report written by `Recording.write(to:)`):
///
/// | command | what it does |
/// |---|---|
/// | `verify PATH` | checks everything; each problem on a line, exit status 1 when any |
/// | `list PATH [--filter NAME]` | each action: its number, time and one line |
/// | `state PATH --at N` | the state after action N (0: before the first), replayed |
/// | `diff PATH --from N --to M` | what changed between the two, field by field |
/// | `html PATH -o FILE [--limit K]` | a timeline page: one HTML file that needs nothing else |
///
/// Action numbers are those `list` prints: a journal's record sequence,
/// a recording's entry from 1. Replaying starts no effect: the follow-ups
/// effects sent are actions of the journal or the recording. A journal's
/// `state` starts from its newest snapshot at or before N.
///
/// The package's own `asynccore-inspect` has no types of yours: it runs
/// `verify` and `list` on the stored JSON, and refuses the others, saying
/// how to build an inspector with this function.
public enum Inspector {
  /// Runs one inspector command on a journal or a recording, writing to
  /// standard output and standard error, and returns the exit status: 0 when
  /// all is well, 1 when the input has problems (each said on a line of
  /// its own), 2 when the input, the command line, or `html`'s `-o FILE`
  /// (refused or not writable) cannot be used (said in one line). A journal
  /// whose core rotates its files faster than they can be read is status 2.
  ///
  /// ```swift
  /// let status = Inspector.run(["diff", "report.json", "--from", "2", "--to", "3"],
  ///                            initialState: AppState(), reducer: appReducer)
  /// ```
  ///
  /// - Parameters:
  ///   - arguments: the command and its arguments, without the program's
  ///     name. `--stats` anywhere adds the peak resident memory at the end.
  ///   - initialState: where a journal that still holds its first record
  ///     starts (a recording holds its own).
  ///   - reducer: what replays the actions. Its effects are not started.
  ///   - codec: what the journal's records and snapshots were encoded with.
  public static func run<State: Codable & Sendable, Action: Codable & Sendable>(
    _ arguments: [String], initialState: State, reducer: Reduce<State, Action>,
    codec: any JournalCodec = JSONJournalCodec()
  ) -> Int32 {
    let inspection = Inspection(initialState: initialState, reducer: reducer, codec: codec)
    return InspectorCommand(program: programName()).run(arguments, inspection)
  }

  /// The running program's name, for its error lines.
  static func programName() -> String {
    let path = CommandLine.arguments.first ?? "inspect"
    return path.split(separator: "/").last.map(String.init) ?? path
  }
}

/// An inspector command that cannot go on: one line, and the exit status.
struct InspectorFailure: Error {
  var line: String
  var status: Int32

  init(_ line: String, status: Int32 = 2) {
    self.line = line
    self.status = status
  }
}

/// What a path names.
enum InspectorSource {
  /// A journal's directory.
  case journal(String)
  /// A recording's file.
  case recording(String)

  init(_ path: String) throws(InspectorFailure) {
    var info = stat()
    guard stat(path, &info) == 0 else {
      throw InspectorFailure("cannot read \(logSafe(path)): \(systemMessage(errno))")
    }
    self = info.st_mode & S_IFMT == S_IFDIR ? .journal(path) : .recording(path)
  }
}

/// The command line: parsed, run, answered.
///
/// `package`: `asynccore-inspect` runs it with untyped JSON.
package struct InspectorCommand {
  /// The program's name, which starts every error line.
  package let program: String

  package init(program: String) {
    self.program = program
  }

  package static let usage =
    "usage: verify PATH | list PATH [--filter NAME] | state PATH --at N | diff PATH --from N --to M"
    + " | html PATH -o FILE [--limit K]"

  /// What the exit status says, after the usage when no command is given.
  package static let exitStatuses =
    "exit status 0: all is well; 1: the input has a problem; 2: the command line, the PATH, or html's -o FILE"
    + " (refused or not writable) cannot be used"

  /// Runs the untyped inspection: `verify` and `list` on stored JSON.
  package func runWithoutTypes(_ arguments: [String]) -> Int32 {
    run(arguments, Inspection<JSONValue, JSONValue>(initialState: nil, reducer: nil, codec: JSONJournalCodec()))
  }

  func run<State, Action>(_ arguments: [String], _ inspection: Inspection<State, Action>) -> Int32 {
    var arguments = arguments
    let stats = arguments.contains("--stats")
    arguments.removeAll { $0 == "--stats" }
    let output = InspectorOutput(program: program)
    let status: Int32
    do {
      status = try dispatch(arguments, inspection, output)
    } catch {
      output.error(error.line)
      status = error.status
    }
    if stats { output.error("peak resident memory " + (peakResident() ?? "unknown")) }
    output.flush()
    return status
  }

  private func dispatch<State, Action>(
    _ arguments: [String], _ inspection: Inspection<State, Action>, _ output: InspectorOutput
  ) throws(InspectorFailure) -> Int32 {
    guard let command = arguments.first else { throw InspectorFailure(Self.usage + "; " + Self.exitStatuses) }
    // Options may come before or after the path: the path is what is left.
    var options = Options(Array(arguments.dropFirst()))
    func path() throws(InspectorFailure) -> String {
      guard options.rest.count == 1, let path = options.rest.first else {
        throw InspectorFailure(
          options.rest.isEmpty
            ? "\(logSafe(command)) needs a PATH; " + Self.usage
            : "unexpected \(logSafe(options.rest[1])); " + Self.usage)
      }
      return path
    }
    switch command {
    case "verify":
      return try inspection.verify(InspectorSource(path()), output)
    case "list":
      let filter = try options.value("--filter")
      return try inspection.list(InspectorSource(path()), filter: filter, output)
    case "state":
      let at = try options.number("--at", from: 0, required: true) ?? 0
      return try inspection.state(InspectorSource(path()), at: at, output)
    case "diff":
      let from = try options.number("--from", from: 0, required: true) ?? 0
      let to = try options.number("--to", from: 0, required: true) ?? 0
      return try inspection.diff(InspectorSource(path()), from: from, to: to, output)
    case "html":
      guard let file = try options.value("-o") else { throw InspectorFailure("html needs -o FILE; " + Self.usage) }
      let limit = try options.number("--limit", from: 1, required: false) ?? 1_000
      return try inspection.html(InspectorSource(path()), to: file, limit: limit, output)
    default:
      throw InspectorFailure("unknown command \(logSafe(command)); " + Self.usage)
    }
  }

  /// The options after the path, each `--name value`, taken as they are read.
  private struct Options {
    var rest: [String]

    init(_ rest: [String]) { self.rest = rest }

    /// The value after `name`, taken out of the rest; an option given twice is refused.
    mutating func value(_ name: String) throws(InspectorFailure) -> String? {
      guard let index = rest.firstIndex(of: name) else { return nil }
      guard index + 1 < rest.count else { throw InspectorFailure("\(name) needs a value; " + InspectorCommand.usage) }
      let value = rest[index + 1]
      rest.removeSubrange(index...index + 1)
      if rest.contains(name) { throw InspectorFailure("\(name) is given twice") }
      return value
    }

    /// The whole number after `name`, at least `minimum`; any other text is one line.
    mutating func number(_ name: String, from minimum: Int, required: Bool) throws(InspectorFailure) -> Int? {
      guard let text = try value(name) else {
        if required { throw InspectorFailure("\(name) N is needed; " + InspectorCommand.usage) }
        return nil
      }
      guard let number = Int(text), number >= minimum else {
        throw InspectorFailure("\(name) takes a whole number from \(minimum), not \(logSafe(text))")
      }
      return number
    }

  }
}

/// Standard output (buffered by the C library) and standard error (its own
/// lines, after flushing standard output, so the two keep their order).
struct InspectorOutput {
  let program: String

  func line(_ text: String) {
    print(text)
  }

  func error(_ text: String) {
    flush()
    let bytes = Array((program + ": " + text + "\n").utf8)
    var done = 0
    while done < bytes.count {
      let written = bytes[done...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
      if written < 0, errno == EINTR { continue }
      if written <= 0 { return }
      done += written
    }
  }

  func flush() {
    fflush(nil)
  }
}

/// The `VmHWM` line of /proc/self/status (the most memory resident), or `nil`.
func peakResident() -> String? {
  let descriptor = open("/proc/self/status", O_RDONLY)
  guard descriptor >= 0 else { return nil }
  defer { close(descriptor) }
  var bytes = [UInt8](repeating: 0, count: 8192)
  let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
  guard count > 0 else { return nil }
  let status = String(decoding: bytes[..<count], as: UTF8.self)
  guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
  return line.dropFirst("VmHWM:".count).trimmingPrefix(while: \.isWhitespace).description
}
