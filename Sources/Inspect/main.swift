// asynccore-inspect: reads a journal's directory without changing it.
//
//   asynccore-inspect verify DIR               every problem by file and offset; status 1 when any
//   asynccore-inspect list DIR [--filter NAME] each record: index, sequence, time, its body on one line
//
// The time is the seconds from the listing's first record to this one
// (`12.345s`), from the time each record carries (when it was appended);
// `--filter` keeps the first record's time as the start, so a filtered
// line shows the same time as unfiltered.
//
// With `--stats` anywhere, it ends by writing the most memory it had
// resident to standard error (Linux), which shows the streaming at work.
//
// It does not know the journal's action type: it works on the bytes. A body
// that is UTF-8 text (the JSON codec's output) is shown as text, anything
// else as hex, cut to one line. Both commands stream: one record in memory
// at a time (JournalReader).
//
// Exit status: 0 when the journal reads back whole, 1 when it has a problem
// (each on its own line on standard error), 2 for a command line or a
// directory it cannot use (one line on standard error).

import AsyncCore
import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

let usage = "usage: asynccore-inspect verify DIR | asynccore-inspect list DIR [--filter NAME] [--stats]"

/// The widest rendering of a record body, in UTF-8 bytes.
let lineLimit = 160

func printError(_ line: String) {
  // What was printed first comes first: `fflush(nil)` flushes standard
  // output (`stdout` itself, a C global, is not concurrency-safe in Swift
  // 6), then write(2) rather than `stderr` for the same reason.
  fflush(nil)
  let bytes = Array(("asynccore-inspect: " + line + "\n").utf8)
  var done = 0
  while done < bytes.count {
    let written = bytes[done...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    if written < 0, errno == EINTR { continue }
    if written <= 0 { return }
    done += written
  }
}

func fail(_ line: String, status: Int32 = 2) -> Never {
  printError(line)
  exit(status)
}

/// The body on one line: text when it is UTF-8 with no control characters
/// but whitespace (the JSON codec's output), hex otherwise; cut at `lineLimit`.
func render(_ body: [UInt8]) -> String {
  if let text = String(validating: body, as: UTF8.self),
    text.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" || $0 == "\t" || $0 == "\r" })
  {
    return logSafe(text, quoted: false, limit: lineLimit)
  }
  let digits = Array("0123456789abcdef".utf8)
  var hex: [UInt8] = Array("hex ".utf8)
  for byte in body.prefix(lineLimit / 2) {
    hex.append(digits[Int(byte >> 4)])
    hex.append(digits[Int(byte & 0xf)])
  }
  let more = body.count > lineLimit / 2 ? "… (\(body.count - lineLimit / 2) more bytes)" : ""
  return String(decoding: hex, as: UTF8.self) + more
}

/// `time - start` (nanoseconds) as seconds to the nearest millisecond,
/// `12.345s` (`-0.250s` before the start: the wall clock was set back);
/// `?s` when the difference is beyond `Int64`, which only a damaged clock writes.
func seconds(_ time: Int64, since start: Int64) -> String {
  let (nanoseconds, overflow) = time.subtractingReportingOverflow(start)
  guard !overflow else { return "?s" }
  let milliseconds = (nanoseconds.magnitude + 500_000) / 1_000_000
  let fraction = String(milliseconds % 1_000)
  let sign = nanoseconds < 0 && milliseconds > 0 ? "-" : ""
  return sign + "\(milliseconds / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + "s"
}

/// The action's name in a JSON body: the first key of an object
/// (`{"add":{"_0":1}}` is `add`, as Swift's synthesized `Codable` writes an
/// enum case), or the string itself (a `String`-backed enum). `nil` for
/// anything else.
func actionName(_ body: [UInt8]) -> String? {
  var index = body.startIndex
  func skipSpace() {
    while index < body.endIndex, [0x20, 0x09, 0x0a, 0x0d].contains(body[index]) { index += 1 }
  }
  func string() -> String? {
    guard index < body.endIndex, body[index] == UInt8(ascii: "\"") else { return nil }
    index += 1
    let start = index
    while index < body.endIndex, body[index] != UInt8(ascii: "\"") {
      index += body[index] == UInt8(ascii: "\\") ? 2 : 1
    }
    guard index < body.endIndex else { return nil }
    return String(validating: body[start..<index], as: UTF8.self)
  }
  skipSpace()
  guard index < body.endIndex else { return nil }
  if body[index] == UInt8(ascii: "{") {
    index += 1
    skipSpace()
  }
  return string()
}

/// Walks the journal in `directory`, reporting each problem on standard
/// error; returns whether there was any. A directory that cannot be read
/// ends the program with status 2.
func scan(_ directory: String, _ visit: (JournalReader.Item) -> Void) -> Bool {
  var problems = 0
  do {
    try JournalReader(directory: directory).scan { item in
      if case .problem(let problem) = item {
        problems += 1
        if problem.reason == .notAJournal { fail(problem.description) }
        printError(problem.description)
      }
      visit(item)
    }
  } catch {
    fail("\(error)")
  }
  return problems > 0
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

/// Ends the program with `status`, after the statistics when asked for.
func finish(_ status: Int32) -> Never {
  if stats { printError("peak resident memory " + (peakResident() ?? "unknown")) }
  exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let stats = arguments.contains("--stats")
arguments.removeAll { $0 == "--stats" }
guard arguments.count >= 2 else { fail(usage) }
let command = arguments.removeFirst()
let directory = arguments.removeFirst()

switch command {
case "verify":
  guard arguments.isEmpty else { fail(usage) }
  var records = 0
  var snapshots = 0
  let damaged = scan(directory) { item in
    switch item {
    case .record: records += 1
    case .snapshot: snapshots += 1
    case .segment, .problem: break
    }
  }
  print("\(records) records, \(snapshots) snapshots: " + (damaged ? "damaged" : "ok"))
  finish(damaged ? 1 : 0)

case "list":
  var filter: String?
  if !arguments.isEmpty {
    guard arguments.count == 2, arguments[0] == "--filter" else { fail(usage) }
    filter = arguments[1]
  }
  var index = 0
  var start: Int64?  // the first record's time, filtered out or not
  let damaged = scan(directory) { item in
    switch item {
    case .snapshot(_, let sequence, let bytes):
      if filter == nil { print("snapshot  through \(sequence)  \(bytes) bytes of state") }
    case .record(let record, _, _):
      index += 1
      let first = start ?? record.time
      start = first
      if let filter, actionName(record.body) != filter { return }
      print("\(index)  \(record.sequence)  \(seconds(record.time, since: first))  \(render(record.body))")
    case .segment, .problem: break
    }
  }
  finish(damaged ? 1 : 0)

default:
  fail("unknown command \(logSafe(command)); " + usage)
}
