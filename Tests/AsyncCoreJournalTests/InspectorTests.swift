import AsyncCoreJournal
import AsyncCoreProcessTestSupport
import Foundation
import Testing

/// The probe's to-do list, mirrored here to read what the inspector prints
/// (the probe's `Todos`, `TodoAction` and `todoAction(_:)`).
struct ProbeTodo: Codable, Equatable {
  var title: String
  var isDone = false
}

struct ProbeTodos: Codable, Equatable {
  var items: [ProbeTodo] = []
  var filter = "all"

  /// The state after the probe's first `count` scripted actions.
  static func after(_ count: Int) -> ProbeTodos {
    var state = ProbeTodos()
    for number in stride(from: 1, through: count, by: 1) {
      if number % 25 == 0 {
        state.items.removeAll { $0.isDone }
      } else if number % 10 == 0 {
        state.filter = number % 20 == 0 ? "all" : "done"
      } else if number % 4 == 0 {
        let index = (number / 4 + 1) % 3
        if state.items.indices.contains(index) { state.items[index].isDone.toggle() }
      } else {
        state.items.append(ProbeTodo(title: "task \(number)"))
      }
    }
    return state
  }
}

/// `Inspector.run` with a user's types (the probe's `inspect` mode, as a
/// user's own executable), and `asynccore-inspect` on recordings.
@Suite("The inspector with the user's types: state, diff, html, and recordings", .timeLimit(.minutes(5)))
struct InspectorTests {
  /// Runs the probe with `arguments`: its exit status and its lines,
  /// standard output's and standard error's in the order written.
  func probe(_ arguments: [String], product: String = "AsyncCoreJournalProbe") async throws
    -> (status: Int32, lines: [String])
  {
    try await blocking {
      let child = try Probe(arguments, product: product)
      child.closeInput()
      let lines = child.remainingLines()
      return (child.exitStatus(), lines)
    }
  }

  /// A recording of the first `count` scripted actions, written by the probe.
  func report(_ count: Int, in scratch: Scratch) async throws -> String {
    let file = scratch.path + "/report.json"
    let (status, lines) = try await probe(["todos-report", file, "\(count)"])
    try #require(status == 0, "\(lines)")
    return file
  }

  /// The state `state --at` printed, decoded.
  func state(_ lines: [String]) throws -> ProbeTodos {
    try JSONDecoder().decode(ProbeTodos.self, from: Data(lines.joined(separator: "\n").utf8))
  }

  @Test("state --at N on a journal whose reducer returns .send: the state recovered from its first N records")
  func journalReplayEqualsRecovery() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (status, lines) = try await probe(["echo-journal", scratch.journal, "3"])
    try #require(status == 0, "\(lines)")
    #expect(lines == [#"state {"a":3,"b":3}"#])
    let (_, recovered) = try await probe(["echo-recover", scratch.journal])
    #expect(recovered == [#"recovered {"a":3,"b":3}"#])
    // Each .first and its .send(.second) are two records.
    for at in 0...6 {
      let (status, state) = try await probe(["echo-inspect", "state", scratch.journal, "--at", "\(at)"])
      #expect(status == 0, "\(state)")
      let expected = #"{"a":\#((at + 1) / 2),"b":\#(at / 2)}"#
      #expect(state.joined().filter { !$0.isWhitespace } == expected, "--at \(at)")
    }
  }

  @Test("list of a recording: each action's number, time and one line in Swift's notation")
  func listsARecording() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(12, in: scratch)
    let (status, lines) = try await probe(["inspect", "list", file])
    #expect(status == 0)
    #expect(lines.count == 12)
    #expect(lines.first?.hasPrefix("1  ") == true)
    #expect(lines.first?.hasSuffix(#"  .add("task 1")"#) == true, "\(lines)")
    #expect(lines[3].hasSuffix("  .toggle(2)"), "\(lines)")
    #expect(lines[9].hasSuffix(#"  .setFilter("done")"#), "\(lines)")
    let (_, toggles) = try await probe(["inspect", "list", file, "--filter", "toggle"])
    #expect(toggles.map { $0.prefix(3) } == ["4  ", "8  ", "12 "], "\(toggles)")
  }

  @Test("state --at N replays a recording's first N actions; 0 is its initial state")
  func stateOfARecording() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(30, in: scratch)
    for at in [0, 4, 17, 30] {
      let (status, lines) = try await probe(["inspect", "state", file, "--at", "\(at)"])
      #expect(status == 0, "\(lines)")
      #expect(try state(lines) == ProbeTodos.after(at), "at \(at)")
    }
  }

  @Test("diff --from N --to M prints each changed field in TestCore's notation")
  func diffInTestCoreNotation() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(12, in: scratch)
    let (status, lines) = try await probe(["inspect", "diff", file, "--from", "3", "--to", "4"])
    #expect(status == 0)
    #expect(lines == ["items[2].isDone: false, true"])
    let (_, filter) = try await probe(["inspect", "diff", file, "--from", "9", "--to", "10"])
    #expect(filter == [#"filter: "all", "done""#])
    let (_, none) = try await probe(["inspect", "diff", file, "--from", "4", "--to", "4"])
    #expect(none == ["no differences"])
  }

  @Test(
    "a journal: state --at N starts from the newest snapshot at or before N; before the oldest, one line")
  func stateOfAJournal() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (written, output) = try await probe(["todos-journal", scratch.journal, "250", "100"])
    try #require(written == 0, "\(output)")
    // Snapshots every 100 records: the journal keeps the snapshots through
    // 100 and 200 and the records after 100, so 150 can only come from the
    // first snapshot.
    for at in [100, 101, 150, 200, 250] {
      let (status, lines) = try await probe(["inspect", "state", scratch.journal, "--at", "\(at)"])
      #expect(status == 0, "at \(at): \(lines)")
      #expect(try state(lines) == ProbeTodos.after(at), "at \(at)")
    }
    let (before, beforeLine) = try await probe(["inspect", "state", scratch.journal, "--at", "99"])
    #expect(before == 1)
    #expect(
      beforeLine == [
        "AsyncCoreJournalProbe: action 99 is before what the journal holds "
          + "(its oldest snapshot covers through 100, its first record is 101)"
      ])
    let (past, line) = try await probe(["inspect", "state", scratch.journal, "--at", "251"])
    #expect(past == 1)
    #expect(line == ["AsyncCoreJournalProbe: action 251 is past the journal's last record (250)"])
  }

  @Test("state --at N reads no further than record N: a later segment that cannot be read is not reached")
  func stateStopsAfterItsRecord() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (written, output) = try await probe(["todos-journal", scratch.journal, "250", "0"])
    try #require(written == 0, "\(output)")
    // A later "segment" that is a directory: reading it fails, so any
    // command that reaches it says so, as verify shows.
    let later = scratch.journal + "/segment-00000000000000000251.log"
    try FileManager.default.createDirectory(atPath: later, withIntermediateDirectories: false)
    for at in [1, 120, 250] {
      let (status, lines) = try await probe(["inspect", "state", scratch.journal, "--at", "\(at)"])
      #expect(status == 0, "at \(at): \(lines)")
      #expect(!lines.contains { $0.contains("251") }, "at \(at): \(lines)")
      #expect(try state(lines) == ProbeTodos.after(at), "at \(at)")
    }
    let (verified, summary) = try await probe(["inspect", "verify", scratch.journal])
    #expect(verified != 0)
    #expect(summary.contains { $0.contains(later) }, "\(summary)")
  }

  @Test("diff of a journal, and verify with the types: every record decodes, status 0")
  func diffAndVerifyAJournal() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    _ = try await probe(["todos-journal", scratch.journal, "12", "0"])
    let (status, lines) = try await probe(["inspect", "diff", scratch.journal, "--from", "3", "--to", "4"])
    #expect(status == 0)
    #expect(lines == ["items[2].isDone: false, true"])
    let (verified, summary) = try await probe(["inspect", "verify", scratch.journal])
    #expect(verified == 0)
    #expect(summary == ["12 records, 0 snapshots: ok"])
  }

  @Test("html writes one page with a step per action, each step's differences and state inside")
  func htmlOfARecording() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(30, in: scratch)
    let page = scratch.path + "/timeline.html"
    let (status, lines) = try await probe(["inspect", "html", file, "-o", page])
    #expect(status == 0)
    #expect(lines == ["wrote 30 steps to \(page)"])
    let html = try String(contentsOfFile: page, encoding: .utf8)
    #expect(html.components(separatedBy: #"<li class="step" "#).count - 1 == 30)
    #expect(html.contains("items[2].isDone: false, true"))
    let (limited, limitedLines) = try await probe(["inspect", "html", file, "-o", page, "--limit", "10"])
    #expect(limited == 0)
    #expect(limitedLines == ["wrote 10 steps to \(page) (the 20 before them left out: --limit)"])
  }

  @Test("asynccore-inspect verifies and lists a recording without its types, as JSON; state needs the types")
  func untypedRecording() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(5, in: scratch)
    let (verified, summary) = try await probe(["verify", file], product: "asynccore-inspect")
    #expect(verified == 0)
    #expect(summary == ["5 actions: ok"])
    let (listed, lines) = try await probe(["list", file, "--filter", "toggle"], product: "asynccore-inspect")
    #expect(listed == 0)
    #expect(lines.count == 1)
    #expect(lines.first?.hasPrefix("4  ") == true)
    #expect(lines.first?.hasSuffix(#"  {"toggle":{"_0":2}}"#) == true, "\(lines)")
    let (refused, hint) = try await probe(["state", file, "--at", "2"], product: "asynccore-inspect")
    #expect(refused == 2)
    #expect(hint.count == 1)
    #expect(hint.first?.contains("Inspector.run(_:initialState:reducer:)") == true)
  }

  @Test(
    "bad input gets one line and a non-zero status: no such file, other JSON, cut JSON, an unknown action, N too far"
  )
  func badInput() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(5, in: scratch)
    let good = try String(contentsOfFile: file, encoding: .utf8)

    let (missing, missingLines) = try await probe(["inspect", "list", scratch.path + "/none.json"])
    #expect(missing == 2)
    #expect(missingLines.count == 1)
    #expect(missingLines.first?.contains("No such file or directory") == true, "\(missingLines)")

    let other = scratch.path + "/other.json"
    try #"{"hello":"world"}"#.write(toFile: other, atomically: true, encoding: .utf8)
    let cut = scratch.path + "/cut.json"
    try String(good.prefix(good.count / 2)).write(toFile: cut, atomically: true, encoding: .utf8)
    let unknown = scratch.path + "/unknown.json"
    try good.replacingOccurrences(of: "toggle", with: "explode").write(
      toFile: unknown, atomically: true, encoding: .utf8)
    for bad in [other, cut, unknown] {
      for command in [["verify", bad], ["list", bad], ["state", bad, "--at", "1"]] {
        let (status, lines) = try await probe(["inspect"] + command)
        #expect(status == 1, "\(command): \(lines)")
        #expect(lines.count == 1, "\(command): \(lines)")
        #expect(lines.first?.hasPrefix("AsyncCoreJournalProbe: ") == true, "\(command): \(lines)")
      }
    }

    let (past, pastLines) = try await probe(["inspect", "state", file, "--at", "6"])
    #expect(past == 1)
    #expect(pastLines == ["AsyncCoreJournalProbe: action 6 is past the recording's last (5)"])
    let (negative, negativeLines) = try await probe(["inspect", "state", file, "--at", "-1"])
    #expect(negative == 2)
    #expect(negativeLines == [#"AsyncCoreJournalProbe: --at takes a whole number from 0, not "-1""#])
    let (noOutput, noOutputLines) = try await probe(["inspect", "html", file])
    #expect(noOutput == 2)
    #expect(noOutputLines.first?.hasPrefix("AsyncCoreJournalProbe: html needs -o FILE") == true)
  }

  @Test("html never writes over what it reads: the recording itself, or a file in the journal's folder")
  func htmlRefusesToOverwriteItsInput() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(5, in: scratch)
    let before = try Data(contentsOf: URL(fileURLWithPath: file))
    let (status, lines) = try await probe(["inspect", "html", file, "-o", file])
    #expect(status == 2)
    #expect(lines == [#"AsyncCoreJournalProbe: -o "\#(file)" is the recording it reads: choose another file"#])
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
    // A hard link to it is the same file under another name.
    let hardLink = scratch.path + "/hard.json"
    try #require(link(file, hardLink) == 0)
    let (linked, linkedLines) = try await probe(["inspect", "html", file, "-o", hardLink])
    #expect(linked == 2)
    #expect(
      linkedLines == [#"AsyncCoreJournalProbe: -o "\#(hardLink)" is the recording it reads: choose another file"#])
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)

    _ = try await probe(["todos-journal", scratch.journal, "5", "0"])
    let segment = scratch.journal + "/segment-00000000000000000001.log"
    let journalBytes = try Data(contentsOf: URL(fileURLWithPath: segment))
    for target in [segment, scratch.journal + "/timeline.html"] {
      let (refused, refusal) = try await probe(["inspect", "html", scratch.journal, "-o", target])
      #expect(refused == 2)
      #expect(refusal.first?.hasSuffix("is inside the journal it reads: choose a file elsewhere") == true, "\(refusal)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: segment)) == journalBytes)
    #expect(!FileManager.default.fileExists(atPath: scratch.journal + "/timeline.html"))
    // A page over a hard link to the segment, outside the folder: the page
    // replaces the name, and the segment keeps its bytes.
    let outside = scratch.path + "/segment-link.html"
    try #require(link(segment, outside) == 0)
    let (replaced, _) = try await probe(["inspect", "html", scratch.journal, "-o", outside])
    #expect(replaced == 0)
    #expect(try Data(contentsOf: URL(fileURLWithPath: segment)) == journalBytes)
    #expect(
      String(decoding: try Data(contentsOf: URL(fileURLWithPath: outside)), as: UTF8.self).hasPrefix("<!DOCTYPE html>"))
  }

  @Test("html writes through a link and into a pipe (-o /dev/stdout); a folder that is not there is one line")
  func htmlWritesThrough() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(3, in: scratch)
    let target = scratch.path + "/target.html"
    let link = scratch.path + "/link.html"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    let (status, _) = try await probe(["inspect", "html", file, "-o", link])
    #expect(status == 0)
    #expect(try String(contentsOfFile: target, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)

    let (piped, lines) = try await probe(["inspect", "html", file, "-o", "/dev/stdout"])
    #expect(piped == 0)
    #expect(lines.first == "<!DOCTYPE html>")
    #expect(lines.last == "wrote 3 steps to /dev/stdout")

    let (missing, missingLines) = try await probe(["inspect", "html", file, "-o", scratch.path + "/none/t.html"])
    #expect(missing == 2)
    #expect(
      missingLines == [
        #"AsyncCoreJournalProbe: cannot write "\#(scratch.path)/none/t.html": "#
          + "No such file or directory (errno 2)"
      ])
  }

  @Test("--limit takes a whole number from 1: 0, a negative number and a word get the same line")
  func limitIsOneMessage() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(3, in: scratch)
    for limit in ["0", "-3", "abc"] {
      let (status, lines) = try await probe(["inspect", "html", file, "-o", scratch.path + "/t.html", "--limit", limit])
      #expect(status == 2)
      #expect(lines == [#"AsyncCoreJournalProbe: --limit takes a whole number from 1, not "\#(limit)""#])
    }
  }

  @Test(
    "html -o on a full device is one line with ENOSPC and status 2, and the device stays a device",
    .enabled(if: RecordingFileTests.canMakeDevices, "making device nodes needs root (CAP_MKNOD)"))
  func htmlOnAFullDevice() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(3, in: scratch)
    let full = scratch.path + "/full"  // this test's own node, with /dev/full's numbers
    try #require(mknod(full, S_IFCHR | 0o666, RecordingFileTests.device(1, 7)) == 0)
    let (status, lines) = try await probe(["inspect", "html", file, "-o", full])
    #expect(status == 2)
    #expect(lines == [#"AsyncCoreJournalProbe: cannot write "\#(full)": No space left on device (errno 28)"#])
    #expect(RecordingFileTests.kind(full) == S_IFCHR)
  }

  @Test("options may come before the path; an option given twice, or a second path, is one line")
  func optionsAnywhere() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(12, in: scratch)
    let (status, lines) = try await probe(["inspect", "diff", "--from", "3", "--to", "4", file])
    #expect(status == 0)
    #expect(lines == ["items[2].isDone: false, true"])
    let (twice, twiceLines) = try await probe(["inspect", "state", file, "--at", "1", "--at", "2"])
    #expect(twice == 2)
    #expect(twiceLines == ["AsyncCoreJournalProbe: --at is given twice"])
    let (extra, extraLines) = try await probe(["inspect", "list", file, "other.json"])
    #expect(extra == 2)
    #expect(extraLines.first?.hasPrefix(#"AsyncCoreJournalProbe: unexpected "other.json""#) == true)
  }

  @Test(
    "the page html made of a recording, in Chromium: one entry per action, and #step=4 shows its field's change",
    .enabled(
      if: (Browser.path != nil && Environment.sanitizer == nil) || Browser.isRequired,
      "no chromium on PATH (set ASYNCCORE_REQUIRE_BROWSER=1 to fail instead), or under a sanitizer"))
  func htmlInABrowser() async throws {
    guard let browser = Browser.path else {
      Issue.record(Comment(rawValue: Browser.missing))
      return
    }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = try await report(30, in: scratch)
    let page = scratch.path + "/timeline.html"
    let (status, lines) = try await probe(["inspect", "html", file, "-o", page])
    try #require(status == 0, "\(lines)")
    let url = URL(fileURLWithPath: page).absoluteString + "#step=4"
    let run = try await Browser.run(browser, ["--dump-dom"], url: url, in: scratch.path)
    #expect(!run.timedOut && run.status == 0, "the browser: \(run.status): \(run.errors.suffix(2_000))")
    let entries = run.output.components(separatedBy: #"<li class="step" "#).count - 1
    #expect(entries == 30)
    let diff = try #require(run.output.range(of: #"<pre id="diff">"#))
    let end = try #require(run.output.range(of: "</pre>", range: diff.upperBound..<run.output.endIndex))
    #expect(run.output[diff.upperBound..<end.lowerBound] == "items[2].isDone: false, true")

    // The page people look at in CI's output.
    if let folder = Environment.string("ASYNCCORE_SCREENSHOT_DIR") {
      let screenshot = folder + "/timeline.png"
      unlink(screenshot)
      let shot = try await Browser.run(
        browser, ["--screenshot=\(screenshot)", "--window-size=1200,800", "--hide-scrollbars"], url: url,
        in: scratch.path)
      #expect(!shot.timedOut && shot.status == 0, "the screenshot: \(shot.status): \(shot.errors.suffix(2_000))")
      let png = contents(of: screenshot)
      #expect(png.starts(with: [0x89, 0x50, 0x4e, 0x47]) && png.count > 1_000, "\(screenshot): \(png.count) bytes")
    }
  }
}
