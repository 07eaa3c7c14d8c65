import AsyncCore
import AsyncCoreJournal
import Foundation
import Testing

/// A recording as a file: written atomically, read back equal, and every
/// bad file refused with its typed error and one line.
@Suite("Recording files", .timeLimit(.minutes(5)))
struct RecordingFileTests {
  struct Shelf: Codable, Sendable, Equatable {
    var books: [String] = []
  }

  enum ShelfAction: Codable, Sendable, Equatable {
    case shelve(String)
    case clear
  }

  static let sample = Recording<Shelf, ShelfAction>(
    initialState: Shelf(books: ["Emma"]),
    entries: [.init(action: .shelve("Dune"), time: .milliseconds(1_250)), .init(action: .clear, time: .seconds(2))],
    finalState: Shelf())

  /// Writes `text` to `name` in `scratch` and reads it as a recording.
  static func read(_ text: String, in scratch: Scratch) -> RecordingFileError? {
    let path = scratch.path + "/report.json"
    _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    do {
      _ = try Recording<Shelf, ShelfAction>(contentsOf: path)
      return nil
    } catch {
      return error
    }
  }

  @Test("a recording written and read back is equal, as sorted-key JSON, with no temporary file left")
  func roundTrip() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let path = scratch.path + "/report.json"
    try Self.sample.write(to: path)
    #expect(try Recording<Shelf, ShelfAction>(contentsOf: path) == Self.sample)
    #expect(names(in: scratch.path) == ["report.json"])
    let text = String(decoding: contents(of: path), as: UTF8.self)
    #expect(text.hasPrefix("{\n  \"entries\" : ["))
    #expect(text.contains("\"format\" : \"asynccore-recording\""))
    #expect(text.contains("\"nanoseconds\" : 1250000000"))
    // Written again over the first: replaced whole.
    try Recording<Shelf, ShelfAction>(initialState: Shelf(), entries: [], finalState: Shelf()).write(to: path)
    #expect(try Recording<Shelf, ShelfAction>(contentsOf: path).entries.isEmpty)
  }

  @Test("a recording that does not encode (a NaN in the state) is cannotEncode, one line, and nothing is written")
  func notEncodable() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let path = scratch.path + "/report.json"
    let recording = Recording<Double, ShelfAction>(initialState: .nan, entries: [], finalState: .nan)
    do {
      try recording.write(to: path)
      Issue.record("a NaN state was written")
    } catch {
      guard case .cannotEncode(let failed, _) = error else {
        Issue.record("not cannotEncode: \(error)")
        return
      }
      #expect(failed == path)
      #expect(error.description.hasPrefix("cannot write the recording \"\(path)\": it does not encode as JSON: "))
      #expect(!error.description.contains("\n"))
    }
    #expect(names(in: scratch.path).isEmpty)
  }

  @Test("a missing file is cannotRead with ENOENT, in one line naming the path")
  func missingFile() throws {
    let path = "/nonexistent-\(UUID().uuidString)/report.json"
    #expect(throws: RecordingFileError.cannotRead(path: path, errno: ENOENT)) {
      try Recording<Shelf, ShelfAction>(contentsOf: path)
    }
    let line = RecordingFileError.cannotRead(path: path, errno: ENOENT).description
    #expect(line == "cannot read the recording \"\(path)\": No such file or directory (errno 2)")
  }

  @Test("a directory that does not exist is cannotWrite with ENOENT")
  func unwritable() throws {
    let path = "/nonexistent-\(UUID().uuidString)/report.json"
    #expect(throws: RecordingFileError.cannotWrite(path: path, errno: ENOENT)) {
      try Self.sample.write(to: path)
    }
  }

  @Test(
    "another format, another version, truncated JSON and an unknown action are notARecording, each with its reason on one line"
  )
  func badFiles() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let path = scratch.path + "/report.json"
    let good = String(decoding: try JSONEncoder().encode(Self.sample), as: UTF8.self)
    let cases: [(text: String, reason: String)] = [
      (
        good.replacingOccurrences(of: "asynccore-recording", with: "redux-devtools"),
        #"at format: not an AsyncCore recording: format is "redux-devtools", not "asynccore-recording""#
      ),
      (
        good.replacingOccurrences(of: #""version":1"#, with: #""version":2"#),
        "at version: a recording of version 2, which this version (1) does not read"
      ),
      (good.replacingOccurrences(of: "shelve", with: "burn"), "at entries[0].action: "),
      (String(good.prefix(good.count / 2)), "not valid JSON"),
      ("", "not valid JSON"),
    ]
    for (text, reason) in cases {
      let error = try #require(Self.read(text, in: scratch))
      guard case .notARecording(let errorPath, let found) = error else {
        Issue.record("\(error)")
        continue
      }
      #expect(errorPath == path)
      #expect(found.hasPrefix(reason), "\(found)")
      #expect(!error.description.contains("\n"))
      #expect(error.description.hasPrefix("\"\(path)\" is not a recording: \(reason)"))
    }
  }

  @Test("a path with a line break is escaped in the description: the error stays one line")
  func pathIsEscaped() {
    let error = RecordingFileError.cannotRead(path: "evil\nreport.json", errno: ENOENT)
    #expect(
      error.description == #"cannot read the recording "evil\u{A}report.json": No such file or directory (errno 2)"#)
  }
}
