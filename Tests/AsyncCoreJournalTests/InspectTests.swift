import AsyncCore
import AsyncCoreJournal
import AsyncCoreProcessTestSupport
import Foundation
import Testing

/// `asynccore-inspect`, run as a child process on journals written here.
@Suite("asynccore-inspect on a journal's directory", .timeLimit(.minutes(5)))
struct InspectTests {
  /// Runs the inspector with `arguments`: its exit status and its lines,
  /// standard output's and standard error's in the order it wrote them.
  func inspect(_ arguments: [String]) async throws -> (status: Int32, lines: [String]) {
    try await blocking {
      let child = try Probe(arguments, product: "asynccore-inspect")
      child.closeInput()  // it reads none
      let lines = child.remainingLines()
      return (child.exitStatus(), lines)
    }
  }

  /// ``inspect(_:)`` with `--stats`, and the most memory the inspector had
  /// resident, in kilobytes, from the line `--stats` adds.
  func inspectMeasuring(_ arguments: [String]) async throws -> (status: Int32, lines: [String], peakKilobytes: Int) {
    let (status, lines) = try await inspect(arguments + ["--stats"])
    let prefix = "asynccore-inspect: peak resident memory "
    let stats = try #require(lines.first { $0.hasPrefix(prefix) && $0.hasSuffix(" kB") })
    let kilobytes = try #require(Int(stats.dropFirst(prefix.count).dropLast(3)))
    return (status, lines.filter { $0 != stats }, kilobytes)
  }

  /// A journal in `scratch` with `bodies` as its records, in order.
  func write(_ bodies: [String], in scratch: Scratch) throws {
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    _ = try journal.append(bodies.map { Array($0.utf8) })
    journal.close()
  }

  /// Every file's name and bytes, to show that nothing was changed.
  func files(in directory: String) -> [String: [UInt8]] {
    Dictionary(uniqueKeysWithValues: names(in: directory).map { ($0, contents(of: directory + "/" + $0)) })
  }

  let actions = [#"{"add":{"_0":1}}"#, #"{"reset":{}}"#, #"{"add":{"_0":2}}"#, #""clear""#]

  @Test("list prints each record's sequence, time and JSON body on a line, and exits 0")
  func listsRecords() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write(actions, in: scratch)
    let (status, lines) = try await inspect(["list", scratch.journal])
    // One append: the records share its time.
    #expect(lines == actions.enumerated().map { "\($0 + 1)  0.000s  \($1)" })
    #expect(status == 0)
  }

  @Test("list's time is the seconds since the listing's first record, to the millisecond, filtered or not")
  func listShowsSecondsSinceTheFirstRecord() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try FileManager.default.createDirectory(atPath: scratch.journal, withIntermediateDirectories: false)
    // Times written by hand: the last is 1 minute on, one is before the
    // first (a wall clock set back).
    let start: Int64 = 1_700_000_000_000_000_000
    let after: [Int64] = [0, 1_500_000_000, 12_345_678_901, -250_000_000, 61_000_400_000]
    var bytes = JournalFormat.encode(.init(kind: .segment, identity: testIdentity, sequence: 1))
    for (index, nanoseconds) in after.enumerated() {
      JournalFormat.appendFrame(
        sequence: UInt64(index + 1), time: start + nanoseconds, body: Array(actions[index % 4].utf8), to: &bytes)
    }
    try overwrite(scratch.journal + "/segment-00000000000000000001.log", with: bytes)
    let (status, lines) = try await inspect(["list", scratch.journal])
    #expect(
      lines == [
        "1  0.000s  " + actions[0], "2  1.500s  " + actions[1], "3  12.346s  " + actions[2],
        "4  -0.250s  " + actions[3], "5  61.000s  " + actions[0],
      ])
    #expect(status == 0)
    let (_, filtered) = try await inspect(["list", scratch.journal, "--filter", "reset"])
    #expect(filtered == ["2  1.500s  " + actions[1]])
  }

  @Test("list --filter keeps the records whose action name (first key, or the string) is NAME, with their sequence")
  func listFiltersByActionName() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write(actions, in: scratch)
    let (status, lines) = try await inspect(["list", scratch.journal, "--filter", "add"])
    #expect(lines == ["1  0.000s  " + actions[0], "3  0.000s  " + actions[2]])
    #expect(status == 0)
    let (_, strings) = try await inspect(["list", scratch.journal, "--filter", "clear"])
    #expect(strings == ["4  0.000s  " + actions[3]])
  }

  @Test("list shows a body that is not text as hex, and cuts a long body to one bounded line")
  func listRendersBinaryAsHexAndCutsLongBodies() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    _ = try journal.append([[0x00, 0xff, 0x10], Array(#"{"text":"\#(String(repeating: "a", count: 1_000))"}"#.utf8)])
    journal.close()
    let (status, lines) = try await inspect(["list", scratch.journal])
    #expect(status == 0)
    #expect(lines.count == 2)
    #expect(lines.first == "1  0.000s  hex 00ff10")
    let long = try #require(lines.last)
    #expect(long.hasPrefix(#"2  0.000s  {"text":"aaaa"#))
    #expect(long.hasSuffix("more bytes)"))
    #expect(long.utf8.count < 200)
  }

  @Test("list shows the snapshots, then the records the journal still holds")
  func listShowsSnapshots() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    _ = try journal.append(actions.map { Array($0.utf8) })
    try journal.writeSnapshot(Array(#"{"total":3}"#.utf8), coveringThrough: 4)
    _ = try journal.append([Array(actions[0].utf8)])
    journal.close()
    let (status, lines) = try await inspect(["list", scratch.journal])
    #expect(
      lines.dropLast()
        == ["snapshot  through 4  11 bytes of state"]
        + actions.enumerated().map { "\($0 + 1)  0.000s  \($1)" })
    // Appended later: some milliseconds after the first record.
    let last = try #require(lines.last)
    let time = last.dropFirst("5  ".count).prefix { $0 != " " }
    #expect(last == "5  \(time)  " + actions[0])
    #expect(time.hasSuffix("s") && time.split(separator: ".").last?.count == 4, "\(time)")
    #expect(Double(time.dropLast()).map { $0 >= 0 && $0 < 60 } == true, "\(time)")
    #expect(status == 0)
    let (verified, summary) = try await inspect(["verify", scratch.journal])
    #expect(summary == ["5 records, 1 snapshots: ok"])
    #expect(verified == 0)
  }

  @Test(
    "verify and list of a 48 MB journal stay within 8 MB more memory than of a one-record journal: a record at a time",
    .disabled(if: Environment.sanitizer != nil, "a sanitizer keeps freed memory in quarantine"),
    .enabled(if: access("/proc/self/status", R_OK) == 0, "the peak is read from /proc"))
  func streamsInBoundedMemory() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write([actions[0]], in: scratch)
    let (_, _, small) = try await inspectMeasuring(["verify", scratch.journal])
    let large = scratch.path + "/large"
    let (journal, _) = try Journal.open(directory: large, identity: testIdentity, durability: .everyAction)
    // 24 batches of 2,000 records of 1 KB (JSON text), in two segments.
    let body = Array(#"{"add":{"_0":"\#(String(repeating: "x", count: 1_000))"}}"#.utf8)
    for batch in 0..<24 {
      _ = try journal.append(Array(repeating: body, count: 2_000))
      if batch == 11 { try journal.writeSnapshot(Array("{}".utf8), coveringThrough: journal.nextSequence - 1) }
    }
    journal.close()
    let (verified, summary, verifyPeak) = try await inspectMeasuring(["verify", large])
    #expect(summary == ["48000 records, 1 snapshots: ok"])
    #expect(verified == 0)
    let (listed, lines, listPeak) = try await inspectMeasuring(["list", large])
    #expect(lines.count == 48_001)
    #expect(listed == 0)
    #expect(verifyPeak - small < 8 << 10, "verify: \(verifyPeak) kB at most, \(small) for one record")
    #expect(listPeak - small < 8 << 10, "list: \(listPeak) kB at most, \(small) for one record")
  }

  @Test("verify of a journal that reads back whole says so and exits 0")
  func verifyWholeJournal() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write(actions, in: scratch)
    let (status, lines) = try await inspect(["verify", scratch.journal])
    #expect(lines == ["4 records, 0 snapshots: ok"])
    #expect(status == 0)
  }

  @Test("verify reports a bad checksum and a torn record by file and offset, exits 1, and changes no file")
  func verifyReportsDamageWithoutChangingAnything() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write(actions, in: scratch)
    let segment = onlySegment(in: scratch.journal)
    var bytes = contents(of: segment)
    let header = JournalFormat.encode(.init(kind: .segment, identity: testIdentity, sequence: 1)).count
    let second = header + frameSize(Array(actions[0].utf8))  // record 2's frame
    bytes[second + frameSize([])] ^= 0xff  // a byte of its body
    try overwrite(segment, with: bytes)
    // A second segment, cut inside its only record.
    var torn = JournalFormat.encode(.init(kind: .segment, identity: testIdentity, sequence: 5))
    let tornStart = torn.count
    JournalFormat.appendFrame(sequence: 5, time: 0, body: Array(actions[0].utf8), to: &torn)
    let later = scratch.journal + "/segment-00000000000000000005.log"
    try overwrite(later, with: Array(torn.dropLast(3)))
    let before = files(in: scratch.journal)

    let (status, lines) = try await inspect(["verify", scratch.journal])
    #expect(
      lines == [
        "asynccore-inspect: \"\(segment)\" at offset \(second): a record's checksum does not match its bytes",
        "asynccore-inspect: \"\(later)\" at offset 0: expected record 2, found 5",
        "asynccore-inspect: \"\(later)\" at offset \(tornStart): the file ends inside a record (a write that did not finish)",
        "1 records, 0 snapshots: damaged",
      ])
    #expect(status == 1)
    #expect(files(in: scratch.journal) == before)
  }

  @Test(
    "a file of another format version (format 1, before records had a time, or a later one) is named in one line, with status 1",
    arguments: [1, 9] as [UInt16])
  func verifyRefusesAnotherFormatVersion(version: UInt16) async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try FileManager.default.createDirectory(atPath: scratch.journal, withIntermediateDirectories: false)
    let segment = scratch.journal + "/segment-00000000000000000001.log"
    try overwrite(
      segment,
      with: JournalFormat.encode(.init(kind: .segment, formatVersion: version, identity: testIdentity, sequence: 1)))
    let (status, lines) = try await inspect(["verify", scratch.journal])
    #expect(
      lines == [
        "asynccore-inspect: \"\(segment)\" at offset 0: journal format \(version), which this version (format 2) does not read",
        "0 records, 0 snapshots: damaged",
      ])
    #expect(status == 1)
  }

  @Test("a segment cut inside its header is reported as a damaged header, with status 1")
  func verifyReportsTruncatedHeader() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    try write(actions, in: scratch)
    let segment = onlySegment(in: scratch.journal)
    try overwrite(segment, with: Array(contents(of: segment).prefix(20)))
    let (status, lines) = try await inspect(["verify", scratch.journal])
    #expect(
      lines == [
        "asynccore-inspect: \"\(segment)\" at offset 0: the header is damaged or not a journal header",
        "0 records, 0 snapshots: damaged",
      ])
    #expect(status == 1)
  }

  @Test(
    "no such path, a folder of other files or a bad command: one line, status 2; a file not a recording: status 1",
    arguments: ["missing", "file", "empty", "command"])
  func badInputIsOneLine(kind: String) async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let target = scratch.path + "/target"
    var arguments = ["verify", target]
    let expected: String
    var expectedStatus: Int32 = 2
    switch kind {
    case "missing":
      expected = "asynccore-inspect: cannot read \"\(target)\": No such file or directory (errno 2)"
    case "file":
      try overwrite(target, with: Array("not a journal".utf8))
      expected =
        "asynccore-inspect: \"\(target)\" is not a recording: not valid JSON, or cut short"
      expectedStatus = 1
    case "empty":
      try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
      try overwrite(target + "/notes.txt", with: [])
      expected = "asynccore-inspect: \"\(target)\" at offset 0: not a journal: no segment-….log or snapshot-….snap file"
    default:
      arguments = ["replay", target]
      expected = "asynccore-inspect: unknown command \"replay\"; " + InspectorCommand.usage
    }
    let (status, lines) = try await inspect(arguments)
    #expect(lines == [expected])
    #expect(status == expectedStatus)
    #expect(kind != "missing" || !FileManager.default.fileExists(atPath: target), "made no directory")
  }

  @Test("verify reports a deleted newest segment, which recovery cannot know of, by the snapshot before it: status 1")
  func verifyReportsAMissingNewestSegment() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    _ = try journal.append(actions.map { Array($0.utf8) })
    try journal.writeSnapshot(Array(#"{"total":3}"#.utf8), coveringThrough: 4)
    _ = try journal.append([Array(actions[0].utf8), Array(actions[1].utf8)])
    journal.close()
    let newest = scratch.journal + "/segment-00000000000000000005.log"
    try FileManager.default.removeItem(atPath: newest)
    let (status, lines) = try await inspect(["verify", scratch.journal])
    #expect(
      lines == [
        "asynccore-inspect: \"\(newest)\" at offset 0: missing: the writer makes it with snapshot 4, "
          + "so the records after 4 are lost (unless it stopped in between)",
        "4 records, 1 snapshots: damaged",
      ])
    #expect(status == 1)
  }

  @Test("a recording piped in is read to its end: list /dev/stdin lists it")
  func listsARecordingFromAPipe() async throws {
    let report = Recording<JSONValue, JSONValue>(
      initialState: .object([:]),
      entries: [.init(action: .string("clear"), time: .zero), .init(action: .string("reset"), time: .seconds(2))],
      finalState: .object([:]))
    let scratch = try Scratch()
    defer { scratch.remove() }
    try report.write(to: scratch.path + "/report.json")
    let bytes = contents(of: scratch.path + "/report.json")
    let (status, lines) = try await blocking {
      let child = try Probe(["list", "/dev/stdin"], product: "asynccore-inspect")
      child.send(bytes)
      child.closeInput()
      let lines = child.remainingLines()
      return (child.exitStatus(), lines)
    }
    #expect(lines == [#"1  0.000s  "clear""#, #"2  2.000s  "reset""#])
    #expect(status == 0)
  }

  @Test("a recording with a negative or a decreasing time: verify and list name the entry, status 1")
  func refusesTimesThatGoBack() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = scratch.path + "/report.json"
    try overwrite(
      file,
      with: Array(
        (#"{"entries":[{"action":"a","nanoseconds":5},{"action":"b","nanoseconds":-1000000000}],"#
          + #""finalState":{},"format":"asynccore-recording","initialState":{},"version":1}"#).utf8))
    for command in ["verify", "list"] {
      let (status, lines) = try await inspect([command, file])
      #expect(
        lines == [
          #"asynccore-inspect: "\#(file)" is not a recording: at entries[1].nanoseconds: -1000000000 is before the "#
            + "recording started (times count from 0)"
        ])
      #expect(status == 1)
    }
  }

  @Test("without arguments: the usage and what each exit status means, status 2")
  func usageSaysTheExitStatuses() async throws {
    let (status, lines) = try await inspect([])
    #expect(lines == ["asynccore-inspect: " + InspectorCommand.usage + "; " + InspectorCommand.exitStatuses])
    #expect(lines.first?.contains("2: the command line, the PATH, or html's -o FILE (refused or not writable)") == true)
    #expect(status == 2)
  }
}
