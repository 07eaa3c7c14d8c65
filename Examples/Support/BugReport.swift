import AsyncCore
import AsyncCoreJournal

/// The examples' `report FILE` command: a bug report of the session so far
/// (a `Recording` of its core), written as JSON with `write(to:)`.
///
/// ```swift
/// let recorder = await core.record(last: BugReport.limit)   // as the session starts
/// // the user types `report bug.json`:
/// if case .write(let path)? = BugReport.Command("report bug.json") {
///   print(await BugReport.write(recorder, to: path))   // "  Bug report written to bug.json: 12 actions."
/// }
/// ```
///
/// The report holds the newest ``limit`` actions, the state before the
/// first of them and the state now: `swift run PropertySearch inspect list
/// bug.json` lists it, and `TestCore.replay(_:)` turns it into a test.
public enum BugReport {
  /// The actions a session keeps for a report: its newest 1,000.
  public static let limit = 1_000

  /// What a line typed at a prompt asks of the report command.
  public enum Command: Sendable, Equatable {
    /// `report FILE`: write the report to `path` (the rest of the line,
    /// trimmed, so it may hold spaces).
    case write(path: String)
    /// `report` with no file.
    case missingPath

    /// The line for `report` with no file.
    public static let usage = "? report needs a file to write: report FILE"

    /// The command `line` is, or `nil` if it is not `report` (any case) or
    /// `report` then a space and the file.
    ///
    /// ```swift
    /// BugReport.Command("report bug.json")   // .write(path: "bug.json")
    /// BugReport.Command("Leeds")             // nil
    /// ```
    public init?(_ line: some StringProtocol) {
      let text = line.drop { $0 == " " || $0 == "\t" }
      let word = text.prefix { $0 != " " && $0 != "\t" }
      guard word.lowercased() == "report" else { return nil }
      let path = text.dropFirst(word.count).drop { $0 == " " || $0 == "\t" }
      let trimmed = path.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed()
      self = trimmed.isEmpty ? .missingPath : .write(path: String(trimmed))
    }
  }

  /// Writes what `recorder` holds to `path` and returns the one line that
  /// says where and how many actions, or, if it could not, why (the
  /// error's description). Nothing else changes: the session goes on.
  ///
  /// ```swift
  /// await BugReport.write(recorder, to: "/no/such/dir/bug.json")
  /// // "  ! cannot write the recording \"/no/such/dir/bug.json\": No such file or directory"
  /// ```
  public static func write<State: Codable, Action: Codable>(
    _ recorder: Recorder<State, Action>, to path: String
  ) async -> String {
    let recording = await recorder.recording()
    do throws(RecordingFileError) {
      try recording.write(to: path)
    } catch {
      return "  ! \(error.description.escapedForTerminal(limit: EchoLimit.message))"
    }
    let count = recording.entries.count
    return "  Bug report written to \(path.escapedForTerminal()): \(count) \(count == 1 ? "action" : "actions")."
  }
}
