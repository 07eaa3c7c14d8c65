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

  /// The kind of what `path` names (`S_IFREG`, `S_IFLNK`, `S_IFIFO`, …), without following a link; 0 for nothing.
  static func kind(_ path: String) -> mode_t {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
  }

  /// A device number as Linux's C library makes it (`makedev`, a macro Swift does not import), for small numbers.
  static func device(_ major: dev_t, _ minor: dev_t) -> dev_t { major << 8 | minor }

  /// Whether this process may make device nodes (root, with `CAP_MKNOD`): tried in a folder of its own.
  static let canMakeDevices: Bool = {
    guard let scratch = try? Scratch() else { return false }
    defer { scratch.remove() }
    return mknod(scratch.path + "/probe", S_IFCHR | 0o666, device(1, 3)) == 0
  }()

  @Test("a FIFO is written through, as html -o does: its reader gets the whole recording, and it stays a FIFO")
  func writesThroughAFIFO() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let fifo = scratch.path + "/report.json"
    try #require(mkfifo(fifo, 0o644) == 0)
    // The reading end first, so that the write's open does not wait; the
    // recording fits in the pipe's buffer, so the write does not wait either.
    let reader = open(fifo, O_RDONLY | O_NONBLOCK)
    try #require(reader >= 0)
    defer { close(reader) }
    try Self.sample.write(to: fifo)
    #expect(Self.kind(fifo) == S_IFIFO)
    let bytes = available(reader)
    try #require(!bytes.isEmpty, "nothing came through the FIFO")
    #expect(try JSONDecoder().decode(Recording<Shelf, ShelfAction>.self, from: Data(bytes)) == Self.sample)
    #expect(names(in: scratch.path) == ["report.json"])
  }

  @Test(
    "a character device is written through and never replaced: a full one is cannotWrite(ENOSPC), a null one takes it",
    .enabled(if: canMakeDevices, "making device nodes needs root (CAP_MKNOD)"))
  func neverReplacesADevice() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    // Nodes of this test's own, with the numbers of /dev/full (1, 7) and /dev/null (1, 3).
    let full = scratch.path + "/full"
    let null = scratch.path + "/null"
    try #require(mknod(full, S_IFCHR | 0o666, Self.device(1, 7)) == 0)
    try #require(mknod(null, S_IFCHR | 0o666, Self.device(1, 3)) == 0)
    #expect(throws: RecordingFileError.cannotWrite(path: full, errno: ENOSPC)) { try Self.sample.write(to: full) }
    try Self.sample.write(to: null)
    #expect(Self.kind(full) == S_IFCHR)
    #expect(Self.kind(null) == S_IFCHR)
    #expect(names(in: scratch.path) == ["full", "null"])
  }

  @Test("a link is followed: its file gets the recording, the link stays a link; a dangling link's file is made")
  func writesThroughALink() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let target = scratch.path + "/target.json"
    let link = scratch.path + "/report.json"
    try overwrite(target, with: Array("old".utf8))
    try #require(symlink("target.json", link) == 0)  // relative: resolved from the link's folder
    try Self.sample.write(to: link)
    #expect(Self.kind(link) == S_IFLNK)
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "target.json")
    #expect(try Recording<Shelf, ShelfAction>(contentsOf: target) == Self.sample)

    let dangling = scratch.path + "/dangling.json"
    try #require(symlink(scratch.path + "/made.json", dangling) == 0)
    try Self.sample.write(to: dangling)
    #expect(Self.kind(dangling) == S_IFLNK)
    #expect(Self.kind(scratch.path + "/made.json") == S_IFREG)
    #expect(try Recording<Shelf, ShelfAction>(contentsOf: scratch.path + "/made.json") == Self.sample)
    #expect(names(in: scratch.path) == ["dangling.json", "made.json", "report.json", "target.json"])
  }

  @Test("a link planted at the old temporary name is neither followed nor removed; the victim is untouched")
  func ignoresALinkAtATemporaryName() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let victim = scratch.path + "/victim"
    let path = scratch.path + "/report.json"
    try overwrite(victim, with: Array("precious".utf8))
    try #require(symlink(victim, path + ".tmp") == 0)
    try Self.sample.write(to: path)
    #expect(contents(of: victim) == Array("precious".utf8))
    #expect(Self.kind(path + ".tmp") == S_IFLNK)
    #expect(Self.kind(path) == S_IFREG)
    #expect(try Recording<Shelf, ShelfAction>(contentsOf: path) == Self.sample)
    #expect(names(in: scratch.path) == ["report.json", "report.json.tmp", "victim"])
  }

  @Test("a file replaced keeps its permissions")
  func keepsPermissions() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let path = scratch.path + "/report.json"
    try overwrite(path, with: [])
    try #require(chmod(path, 0o600) == 0)
    try Self.sample.write(to: path)
    var info = stat()
    try #require(stat(path, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
  }

  @Test("two writers of one path at once both succeed, every time, and the file is one whole recording")
  func concurrentWriters() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let path = scratch.path + "/report.json"
    let other = Recording<Shelf, ShelfAction>(
      initialState: Shelf(), entries: [.init(action: .shelve("Ulysses"), time: .zero)],
      finalState: Shelf(books: ["Ulysses"]))
    let failures = await withTaskGroup(of: [String].self) { group in
      for recording in [Self.sample, other] {
        group.addTask {
          var failures: [String] = []
          for _ in 0..<30 {
            do throws(RecordingFileError) { try recording.write(to: path) } catch { failures.append(error.description) }
          }
          return failures
        }
      }
      return await group.reduce(into: []) { $0 += $1 }
    }
    #expect(failures.isEmpty, "\(failures.count) of 60 failed: \(failures.first ?? "-")")
    let read = try Recording<Shelf, ShelfAction>(contentsOf: path)
    #expect(read == Self.sample || read == other)
    #expect(names(in: scratch.path) == ["report.json"])
  }

  @Test("a recording read from a pipe is read to its end, as from a file")
  func readsAPipe() throws {
    var ends: [Int32] = [0, 0]
    try #require(pipe(&ends) == 0)
    defer { close(ends[0]) }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
    let bytes = Array(try encoder.encode(Self.sample))
    #expect(bytes.count < 65_536)  // the pipe's buffer holds it: no reader needed while it is written
    #expect(write(ends[1], bytes, bytes.count) == bytes.count)
    close(ends[1])
    #expect(try Recording<Shelf, ShelfAction>(contentsOf: "/dev/fd/\(ends[0])") == Self.sample)
  }

  @Test("an endless source is refused once it passes the read limit, in one error, not read until memory runs out")
  func endlessSourceIsRefused() {
    #expect(throws: RecordingFileError.cannotRead(path: "/dev/zero", errno: EFBIG)) {
      try Recording<Shelf, ShelfAction>(contentsOf: "/dev/zero")
    }
  }

  @Test("a pipe whose reader leaves early is cannotWrite with EPIPE, not a SIGPIPE that ends the process")
  func pipeWhoseReaderLeaves() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let fifo = scratch.path + "/fifo"
    try #require(mkfifo(fifo, 0o600) == 0)
    // Over a pipe's 64 KiB buffer, so the write is still going when the reader leaves.
    let large = Recording<Shelf, ShelfAction>(
      initialState: Shelf(),
      entries: (0..<20_000).map { .init(action: .shelve("book \($0)"), time: .milliseconds($0)) }, finalState: Shelf())
    let reader = Thread {
      let descriptor = open(fifo, O_RDONLY)
      var first = [UInt8](repeating: 0, count: 10)
      _ = Glibc.read(descriptor, &first, first.count)
      close(descriptor)
    }
    reader.start()
    #expect(throws: RecordingFileError.cannotWrite(path: fifo, errno: EPIPE)) { try large.write(to: fifo) }
  }

  @Test("a time that is no Int64, a negative time and a time before the previous entry's are refused by entry")
  func badTimes() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let good = String(decoding: try JSONEncoder().encode(Self.sample), as: UTF8.self)
    let cases: [(text: String, reason: String)] = [
      (
        good.replacingOccurrences(of: "2000000000", with: "1e300"),
        "at entries[1].nanoseconds: 1e+300 is not a whole number of nanoseconds that fits in 64 bits"
      ),
      (
        good.replacingOccurrences(of: "1250000000", with: "-1"),
        "at entries[0].nanoseconds: -1 is before the recording started (times count from 0)"
      ),
      (
        good.replacingOccurrences(of: "2000000000", with: "1000000000"),
        "at entries[1].nanoseconds: 1000000000 is earlier than the entry before (1250000000)"
      ),
    ]
    for (text, reason) in cases {
      let error = try #require(Self.read(text, in: scratch))
      #expect(error == .notARecording(path: scratch.path + "/report.json", reason: reason))
    }
    // Written, the same recordings are refused rather than made into files that do not read back.
    let backwards = Recording<Shelf, ShelfAction>(
      initialState: Shelf(),
      entries: [.init(action: .clear, time: .seconds(2)), .init(action: .clear, time: .seconds(1))],
      finalState: Shelf())
    let path = scratch.path + "/backwards.json"
    #expect(
      throws: RecordingFileError.cannotEncode(
        path: path, reason: "at entries[1].nanoseconds: 1000000000 is earlier than the entry before (2000000000)")
    ) { try backwards.write(to: path) }
    #expect(!FileManager.default.fileExists(atPath: path))
  }
}

/// What can be read from `descriptor` at once (up to 64 KB).
private func available(_ descriptor: Int32) -> [UInt8] {
  var bytes = [UInt8](repeating: 0, count: 65_536)
  let count = read(descriptor, &bytes, bytes.count)
  return count > 0 ? Array(bytes[..<count]) : []
}
