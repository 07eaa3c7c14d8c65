import AsyncCoreJournal
import Foundation

/// The identity of every test journal (and of the probe's).
let testIdentity = JournalIdentity(actionType: "Probe.Action", stateType: "Probe.State", schemaVersion: 1)

/// The body of record `sequence`: 1 to 64 bytes derived from it (the same
/// function as the probe's, in Tests/AsyncCoreJournalProbe/main.swift).
func probeBody(_ sequence: UInt64) -> [UInt8] {
  (0..<(1 + Int(sequence % 64))).map { UInt8(truncatingIfNeeded: sequence &* 31 &+ UInt64($0)) }
}

/// A fresh directory under the system's temporary folder, removed with
/// everything in it at ``remove()``.
struct Scratch {
  let path: String

  init() throws {
    var template = Array((NSTemporaryDirectory() + "/journal-test-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
    path = String(cString: made)
  }

  /// The journal directory inside.
  var journal: String { path + "/journal" }

  func remove() {
    try? FileManager.default.removeItem(atPath: path)
  }
}

/// The names in `directory`, sorted.
func names(in directory: String) -> [String] {
  ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

/// The bytes of the file at `path`.
func contents(of path: String) -> [UInt8] {
  // read(2), not FileManager.contents(atPath:): FoundationEssentials leaked
  // its 4 KB read buffer for an empty file (LeakSanitizer, the browser
  // tests' empty output files).
  let descriptor = open(path, O_RDONLY | O_CLOEXEC)
  guard descriptor >= 0 else { return [] }
  defer { close(descriptor) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65_536)
  while true {
    let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    if count < 0, errno == EINTR { continue }
    guard count > 0 else { return bytes }
    bytes += chunk[..<count]
  }
}

/// Writes `bytes` over the file at `path`.
func overwrite(_ path: String, with bytes: [UInt8]) throws {
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The path of the only segment of the journal in `directory`.
func onlySegment(in directory: String) -> String {
  let segments = names(in: directory).filter { $0.hasPrefix("segment-") && $0.hasSuffix(".log") }
  precondition(segments.count == 1, "expected one segment, found \(segments)")
  return directory + "/" + segments[0]
}

/// The bytes record `body` takes in a segment: its frame's length and
/// checksum, then its sequence, time and body.
func frameSize(_ body: [UInt8]) -> Int {
  JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes + body.count
}

extension JournalRecord {
  /// The record with time 0, as a test builds it: for tests of what was
  /// read back rather than when it was appended (JournalTests checks the
  /// times themselves).
  var untimed: JournalRecord { JournalRecord(sequence: sequence, body: body) }
}

/// What a recovery holds, its records read whole: what the tests compare.
struct Recovered: Equatable {
  var snapshot: JournalSnapshot?
  var records: [JournalRecord]
  var damage: [JournalDamage]
}

extension JournalRecovery {
  /// The recovery read whole, with every record's time 0 (``JournalRecord/untimed``).
  var untimed: Recovered {
    get throws { Recovered(snapshot: snapshot, records: try allRecords().map(\.untimed), damage: damage) }
  }
}
