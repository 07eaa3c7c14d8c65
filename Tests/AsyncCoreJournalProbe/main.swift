// The child process of the journal's fault tests (Tests/AsyncCoreJournalTests/
// JournalProcessTests.swift): a second opener, a full disk, kill -9.
//
//   AsyncCoreJournalProbe hold DIR          open the journal, print "opened", hold it until standard input ends
//   AsyncCoreJournalProbe open DIR          open the journal, print "opened" or "refused <path>"
//   AsyncCoreJournalProbe fill DIR BYTES    limit files to BYTES (RLIMIT_FSIZE, SIGXFSZ ignored), append
//                                           batches of 5 until one fails, print "acknowledged N" and
//                                           "error <error>" and "segment bytes <size>"; lift the limit,
//                                           append one more batch,
//                                           print "acknowledged after lifting N"
//   AsyncCoreJournalProbe flood DIR         append one record at a time under .everyAction and print
//                                           "ack <sequence>" as each append returns, until killed
//   AsyncCoreJournalProbe core-flood DIR D  a durable Core with durability D (everyAction, interval,
//                                           operatingSystem): print "recovered <state>", then 4 producers
//                                           dispatch concurrently and print "ack P I" as each dispatch
//                                           returns, until killed (CoreModes.swift)
//   AsyncCoreJournalProbe core-fill DIR BYTES  a durable Core on a full disk: see `coreFill`
//   AsyncCoreJournalProbe core-recover DIR  open the core-fill journal, print "recovered <state>"
//   AsyncCoreJournalProbe entities-flood DB ENTITIES MAXACTIVE BURST CURSORS  a registry of entities on
//                                           one SQLite database: report the states of the ids read from
//                                           standard input, then flood from one task per cursor and print
//                                           "ack ID SEQ P" as each dispatch returns, until killed
//                                           (EntityModes.swift)
//   AsyncCoreJournalProbe entities-report DB  print the states of the ids read from standard input
//   AsyncCoreJournalProbe entities-fill DB  a full disk during a passivation's snapshot: see `entitiesFill`
//   AsyncCoreJournalProbe todos-journal DIR N SNAPSHOT  a journaled to-do list of N actions (TodoModes.swift)
//   AsyncCoreJournalProbe todos-report FILE N            the same N actions recorded, written to FILE
//   AsyncCoreJournalProbe inspect ARGUMENTS…             Inspector.run with the to-do list's types
//   AsyncCoreJournalProbe recover-file DIR BATCH  open the journal in DIR (the types its first segment
//                                           names), stream every record in batches of BATCH, print
//                                           "records N peakRSS BYTES" (VmHWM): for the benchmark
//   AsyncCoreJournalProbe measure DIR       print rough figures (append + fdatasync per record, a batch
//                                           of 100, sequential MB/s, recovery MB/s) for a report; the
//                                           benchmark family "journal" is where figures belong
//
// Output goes straight to file descriptor 1 with write(2), unbuffered: a
// line the parent reads was written after the append returned.
import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The identity every probe journal has (the tests use the same).
let identity = JournalIdentity(actionType: "Probe.Action", stateType: "Probe.State", schemaVersion: 1)

/// The body of record `sequence`: 1 to 64 bytes derived from it, so the
/// parent can check each record's content (a copy of the tests' `probeBody`).
func probeBody(_ sequence: UInt64) -> [UInt8] {
  (0..<(1 + Int(sequence % 64))).map { UInt8(truncatingIfNeeded: sequence &* 31 &+ UInt64($0)) }
}

func say(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  var done = 0
  while done < bytes.count {
    let result = bytes[done...].withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    if result <= 0 { exit(3) }
    done += result
  }
}

/// The size of the journal's only segment.
func segmentBytes(in directory: String) -> Int {
  var info = stat()
  let path = directory + "/segment-00000000000000000001.log"
  guard stat(path, &info) == 0 else { fail("stat \(path): errno \(errno)") }
  return Int(info.st_size)
}

func fail(_ message: String) -> Never {
  say("probe: " + message)
  exit(2)
}

/// Limits the files this process writes to `bytes` (RLIMIT_FSIZE), with
/// SIGXFSZ ignored so that a write over it fails with EFBIG instead of
/// ending the process: a full disk. ``liftFileSizeLimit()`` lifts it.
func limitFileSize(to bytes: UInt64) {
  signal(SIGXFSZ, SIG_IGN)
  var limits = rlimit()
  getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limits)
  limits.rlim_cur = rlim_t(bytes)
  guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limits) == 0 else { fail("setrlimit: errno \(errno)") }
}

/// Lifts ``limitFileSize(to:)``'s limit to the hard limit: room again.
func liftFileSizeLimit() {
  var limits = rlimit()
  getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limits)
  limits.rlim_cur = limits.rlim_max
  guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limits) == 0 else { fail("setrlimit: errno \(errno)") }
}

let arguments = CommandLine.arguments
if arguments.count >= 2, arguments[1] == "inspect" { todosInspect(Array(arguments.dropFirst(2))) }
if arguments.count >= 2, arguments[1] == "echo-inspect" { echoInspect(Array(arguments.dropFirst(2))) }
guard arguments.count >= 3 else {
  fail("usage: AsyncCoreJournalProbe hold|open|fill|flood|core-flood|core-fill|core-recover|measure DIR [BYTES|D]")
}
let directory = arguments[2]

switch arguments[1] {
case "hold":
  do {
    let (journal, _) = try Journal.open(directory: directory, identity: identity, durability: .everyAction)
    say("opened")
    var byte: UInt8 = 0
    while read(STDIN_FILENO, &byte, 1) > 0 {}
    journal.close()
  } catch {
    fail("\(error)")
  }

case "open":
  do {
    _ = try Journal.open(directory: directory, identity: identity, durability: .everyAction)
    say("opened")
  } catch .locked(let path) {
    say("refused \(path)")
  } catch {
    fail("\(error)")
  }

case "fill":
  guard arguments.count == 4, let limit = UInt64(arguments[3]) else { fail("fill needs BYTES") }
  do {
    let (journal, recovered) = try Journal.open(directory: directory, identity: identity, durability: .operatingSystem)
    guard recovered.recordCount == 0 else { fail("fill expects a new journal") }
    limitFileSize(to: limit)
    var acknowledged: UInt64 = 0
    while true {
      let batch = (1...5).map { probeBody(acknowledged + UInt64($0)) }
      do {
        let sequences = try journal.append(batch)
        acknowledged = sequences.upperBound - 1
      } catch {
        say("acknowledged \(acknowledged)")
        say("error \(error)")
        say("segment bytes \(segmentBytes(in: directory))")
        break
      }
    }
    liftFileSizeLimit()
    let sequences = try journal.append((1...5).map { probeBody(acknowledged + UInt64($0)) })
    say("acknowledged after lifting \(sequences.upperBound - 1)")
  } catch {
    fail("\(error)")
  }

case "flood":
  do {
    let (journal, recovered) = try Journal.open(directory: directory, identity: identity, durability: .everyAction)
    _ = recovered
    say("recovered \(journal.nextSequence - 1)")
    while true {
      let sequence = journal.nextSequence
      try journal.append([probeBody(sequence)])
      say("ack \(sequence)")
    }
  } catch {
    fail("\(error)")
  }

case "core-flood":
  guard arguments.count == 4 else { fail("core-flood needs a durability") }
  await coreFlood(directory, durability: durability(named: arguments[3]))

case "core-fill":
  guard arguments.count == 4, let limit = UInt64(arguments[3]) else { fail("core-fill needs BYTES") }
  await coreFill(directory, limit: limit)

case "todos-journal":
  guard arguments.count == 5, let count = Int(arguments[3]), let every = Int(arguments[4]) else {
    fail("todos-journal needs N and SNAPSHOT")
  }
  await todosJournal(directory, count: count, snapshotEvery: every)

case "todos-report":
  guard arguments.count == 4, let count = Int(arguments[3]) else { fail("todos-report needs N") }
  await todosReport(directory, count: count)

case "entities-flood":
  await entitiesFlood(directory, arguments: Array(arguments.dropFirst(3)))

case "entities-report":
  await entitiesReport(directory)

case "entities-fill":
  await entitiesFill(directory)

case "core-recover":
  await coreRecover(directory, producers: 1)

case "echo-journal":
  guard arguments.count == 4, let count = Int(arguments[3]) else { fail("echo-journal needs N") }
  await echoJournal(directory, count: count)

case "echo-recover":
  await echoRecover(directory)

case "measure":
  do {
    let clock = ContinuousClock()
    func seconds(_ duration: Duration) -> Double {
      Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
    let body = [UInt8](repeating: 0x5A, count: 100)
    // 1. One record per append, synced each time.
    let (journal, _) = try Journal.open(directory: directory + "/single", identity: identity, durability: .everyAction)
    let singles = 1_000
    let single = clock.measure { for _ in 0..<singles { _ = try? journal.append([body]) } }
    say("everyAction, 1 record of 100 B per append: \(seconds(single) / Double(singles) * 1e6) µs per append")
    // 2. Batches of 100, one write and one sync each.
    let batches = 200
    let batch = Array(repeating: body, count: 100)
    let batched = clock.measure { for _ in 0..<batches { _ = try? journal.append(batch) } }
    say(
      "everyAction, batch of 100 records of 100 B: \(seconds(batched) / Double(batches) * 1e6) µs per batch, "
        + "\(seconds(batched) / Double(batches * 100) * 1e6) µs per record")
    journal.close()
    // 3. Sequential: 64 MiB in batches of 1,000 records of 1 KiB, one sync at the end.
    let (bulk, _) = try Journal.open(directory: directory + "/bulk", identity: identity, durability: .operatingSystem)
    let kibibyte = [UInt8](repeating: 0xA5, count: 1024)
    let bulkBatch = Array(repeating: kibibyte, count: 1_000)
    let rounds = 64
    let written = clock.measure {
      for _ in 0..<rounds { _ = try? bulk.append(bulkBatch) }
      try? bulk.sync()
    }
    let megabytes =
      Double(rounds * 1_000 * (1024 + JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes)) / 1e6
    say("sequential, 64,000 records of 1 KiB then one fdatasync: \(megabytes / seconds(written)) MB/s")
    bulk.close()
    // 4. Recovery of that journal (page cache warm): read, checksum, copy out each record.
    var count = 0
    let recovery = try clock.measure {
      let (reopened, recovered) = try Journal.open(
        directory: directory + "/bulk", identity: identity, durability: .operatingSystem)
      try recovered.readRecords(batch: 1_000) { count += $0.count }
      reopened.close()
    }
    say("recovery of \(count) records (\(megabytes) MB, warm cache): \(megabytes / seconds(recovery)) MB/s")
  } catch {
    fail("\(error)")
  }

case "recover-file":
  guard arguments.count == 4, let batch = Int(arguments[3]), batch > 0 else { fail("recover-file needs BATCH") }
  do {
    let (journal, recovered) = try Journal.open(
      directory: directory, identity: journalIdentity(in: directory), durability: .operatingSystem)
    var count = 0
    try recovered.readRecords(batch: batch) { records in count += records.count }
    journal.close()
    say("records \(count) peakRSS \(peakResidentBytes())")
  } catch {
    fail("\(error)")
  }

default:
  fail("unknown command \(arguments[1])")
}

/// The identity the first segment's header in `directory` names.
func journalIdentity(in directory: String) -> JournalIdentity {
  guard let stream = opendir(directory) else { fail("cannot list \(directory)") }
  var names: [String] = []
  while let entry = readdir(stream) {
    names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
  }
  closedir(stream)
  guard let first = names.filter({ $0.hasPrefix("segment-") && $0.hasSuffix(".log") }).min() else {
    fail("no segment in \(directory)")
  }
  let bytes = fileBytes(directory + "/" + first, limit: 64 * 1024)
  guard case .success(let (header, _)) = JournalFormat.decodeHeader(bytes[...]) else {
    fail("\(first) has no readable header")
  }
  return header.identity
}

/// Up to `limit` bytes of the file at `path`.
func fileBytes(_ path: String, limit: Int) -> [UInt8] {
  let descriptor = open(path, O_RDONLY)
  guard descriptor >= 0 else { fail("cannot open \(path)") }
  defer { close(descriptor) }
  var bytes = [UInt8](repeating: 0, count: limit)
  let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, limit) }
  return Array(bytes[..<max(count, 0)])
}

/// The process's peak resident memory (`VmHWM` in /proc/self/status), in bytes.
func peakResidentBytes() -> Int {
  let status = String(decoding: fileBytes("/proc/self/status", limit: 16 * 1024), as: UTF8.self)
  guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
    let kilobytes = Int(line.dropFirst("VmHWM:".count).split(whereSeparator: \.isWhitespace).first ?? "")
  else { fail("no VmHWM in /proc/self/status") }
  return kilobytes * 1024
}
