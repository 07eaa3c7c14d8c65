import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreJournal
import AsyncCoreLoginExample
import AsyncCorePropertySearchExample
import AsyncCoreTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The examples' `report FILE`: a bug report of the session so far, read
/// back with `Recording(contentsOf:)` and replayed.
@Suite("Bug reports from the examples", .hangDetector)
struct BugReportTests {
  // MARK: - The command

  @Test("`report FILE` is the report command on any screen; `report` alone is refused; as arguments it is one line")
  func command() throws {
    #expect(BugReport.Command("report bug.json") == .write(path: "bug.json"))
    #expect(BugReport.Command("  REPORT   my bug.json \t") == .write(path: "my bug.json"))
    #expect(BugReport.Command("report") == .missingPath)
    #expect(BugReport.Command("reports") == nil)
    #expect(BugReport.Command("Leeds") == nil)

    let results = PropertySearch(stack: [.results(place: "Leeds")], results: Results(place: "Leeds"))
    #expect(PropertySearchInput("report bug.json", on: results) == .report(path: "bug.json"))
    #expect(PropertySearchInput("report", on: PropertySearch()) == .refused(BugReport.Command.usage))
    #expect(
      try PropertySearchOptions(arguments: ["Leeds", "report", "a b.json"]).lines == ["Leeds", "report a b.json"])
    #expect(throws: PropertySearchOptions.Invalid.option("report needs a file: report FILE")) {
      try PropertySearchOptions(arguments: ["Leeds", "report"])
    }

    #expect(LoginInput("report bug.json", on: Login()) == .report(path: "bug.json"))  // not a phone number
    #expect(LoginInput("report bug.json", on: Login(stack: [.home(phone: "1")])) == .report(path: "bug.json"))
    #expect(LoginInput("report", on: Login(stack: [.code(phone: "1")])) == .refused(BugReport.Command.usage))
  }

  // MARK: - PropertySearch

  @Test(
    "PropertySearch: `report FILE` typed in a piped session writes a report that reads back and replays to its final state; a bad path gives one line and the session goes on"
  )
  func propertySearchSession() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/report.json"
    let badPath = directory.path + "/no-such-directory/report.json"
    let program = try ExampleProgram.start(
      "PropertySearch", arguments: ["--latency", "0"],
      input: "Leeds\n2\nreport \(path)\nreport \(badPath)\nback\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))

    let report = try Recording<PropertySearch, PropertySearchAction>(contentsOf: path)
    #expect(report.initialState == PropertySearch())
    #expect(
      report.actions == [
        .search(place: "Leeds"), .results(.startLoading), .results(.endLoading(Self.leeds)),
        .results(.select(number: 2)), .results(.delegate(.didSelect(propertyID: 43))), .detail(.startLoading),
        .detail(.endLoading(Self.leeds[1])),
      ])
    #expect(report.finalState.stack == [.results(place: "Leeds"), .property(id: 43)])
    #expect(report.finalState.detail?.property == Self.leeds[1])
    await Self.expectReplays(report, reducer: PropertySearch.reducer)

    // One line for each report, right after its command; then the session
    // goes on: back is read and draws the results.
    let written = try #require(lines.firstIndex(of: "> report \(path)"))
    #expect(lines[written + 1] == "  Bug report written to \(path): 7 actions.")
    let refused = try #require(lines.firstIndex(of: "> report \(badPath)"))
    #expect(
      lines[refused + 1]
        == "  ! \(RecordingFileError.cannotWrite(path: badPath, errno: ENOENT).description.escapedForTerminal(limit: EchoLimit.message))"
    )
    #expect(lines[refused + 2] == "> back")
    #expect(lines.last == "bye: Search › Leeds")
  }

  @Test("PropertySearch: `report FILE` given as two arguments writes the report of the commands before it")
  func propertySearchArguments() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/report.json"
    let program = try ExampleProgram.start(
      "PropertySearch", arguments: ["--latency", "0", "asynccore://property/42", "report", path])
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    #expect(lines.contains("  Bug report written to \(path): 3 actions."))
    let report = try Recording<PropertySearch, PropertySearchAction>(contentsOf: path)
    #expect(report.actions.first == .openLink("asynccore://property/42"))
    #expect(report.finalState.detail?.property?.id == 42)
    await Self.expectReplays(report, reducer: PropertySearch.reducer)
  }

  @Test(
    "`PropertySearch inspect …` lists, diffs and replays a report with the example's types; Login's inspector refuses it"
  )
  func inspect() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/report.json"
    let session = try ExampleProgram.start("PropertySearch", arguments: ["--latency", "0", "Leeds", "report", path])
    defer { session.terminate() }
    _ = await session.allLines()
    #expect(await session.exitStatus() == .exited(0))

    let list = try await Self.run("PropertySearch", ["inspect", "list", path])
    #expect(list.status == .exited(0))
    #expect(list.lines.count == 3)
    #expect(
      list.lines.first?.hasPrefix("1 ") == true && list.lines.first?.hasSuffix(#".search(place: "Leeds")"#) == true)

    let diff = try await Self.run("PropertySearch", ["inspect", "diff", path, "--from", "2", "--to", "3"])
    #expect(diff.status == .exited(0))
    #expect(diff.lines.contains("results.isLoading: true, false"))

    let state = try await Self.run("PropertySearch", ["inspect", "state", path, "--at", "3"])
    #expect(state.status == .exited(0))
    #expect(state.lines.contains(#"    "isLoading" : false,"#))

    // Login's inspector reads its own types: a PropertySearch report is not one.
    let login = try await Self.run("Login", ["inspect", "list", path])
    #expect(login.status == .exited(1))
    #expect(login.lines.count == 1 && login.lines.first?.contains("is not a recording") == true)
  }

  // MARK: - Login

  @Test(
    "Login: `report FILE` typed in a piped session writes a report that reads back and replays to its final state; a bad path gives one line and the session goes on"
  )
  func loginSession() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/report.json"
    let badPath = directory.path + "/no-such-directory/report.json"
    let program = try ExampleProgram.start(
      "Login", arguments: ["--code", "424242", "--latency", "0"],
      input: "555 0100\n424242\nreport \(path)\nreport \(badPath)\nq\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))

    let report = try Recording<Login, LoginAction>(contentsOf: path)
    #expect(report.initialState == Login())
    // The countdown may have ticked meanwhile, on the real clock.
    #expect(
      report.actions.filter { $0 != .code(.tick) } == [
        .phone(.submit("555 0100")), .phone(.codeSent(phone: "555 0100")), .code(.startCountdown),
        .code(.submit("424242")), .code(.codeAccepted),
      ])
    #expect(report.finalState.signedInPhone == "555 0100")
    await Self.expectReplays(report, reducer: Login.reducer)

    let count = report.entries.count
    let written = try #require(lines.firstIndex(of: "  Bug report written to \(path): \(count) actions."))
    #expect(
      lines[written + 1]
        == "  ! \(RecordingFileError.cannotWrite(path: badPath, errno: ENOENT).description.escapedForTerminal(limit: EchoLimit.message))"
    )
    #expect(lines.last == "bye: signed in as 555 0100")  // the session went on to read q
  }

  // MARK: - Helpers

  /// Runs an example to its end: its output's lines and how it ended.
  static func run(
    _ product: String, _ arguments: [String]
  ) async throws -> (lines: [String], status: ExampleProgram.ExitStatus) {
    let program = try ExampleProgram.start(product, arguments: arguments)
    defer { program.terminate() }
    let lines = await program.allLines()
    return (lines, await program.exitStatus())
  }

  static let leeds = FakePropertyAPI.catalogue.filter { $0.place == "Leeds" }

  /// Replaying `report` into a fresh core gives its final state, and into a
  /// test core records no issue.
  static func expectReplays<State: Sendable & Equatable, Action: Sendable & Equatable>(
    _ report: Recording<State, Action>, reducer: Reduce<State, Action>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let core = Core(initialState: report.initialState, reducer: reducer)
    do {
      try await core.replay(report)
    } catch {
      Issue.record("the fresh core refused the replay: \(error)", sourceLocation: sourceLocation)
    }
    #expect(await core.state == report.finalState, sourceLocation: sourceLocation)
    await core.shutdown()
    let store = TestCore(initialState: report.initialState, reducer: reducer)
    await store.replay(report, sourceLocation: sourceLocation)
  }
}
