import AsyncCoreJournal
import AsyncCoreProcessTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Faults made for real in a child process (Tests/AsyncCoreJournalProbe):
/// a second process, a file-size limit, SIGKILL.
@Suite("Journal faults in child processes", .serialized, .timeLimit(.minutes(5)))
struct JournalProcessTests {
  @Test("a second process opening a held journal is refused with the path held, and the holder is too")
  func secondProcessRefused() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let directory = scratch.journal

    // This process holds it; a child tries.
    let (journal, _) = try Journal.open(directory: directory, identity: testIdentity, durability: .everyAction)
    let childSaw = try await blocking { () throws -> [String] in
      let child = try Probe(["open", directory])
      defer { child.exitStatus() }
      return child.remainingLines()
    }
    #expect(childSaw == ["refused \(directory)"])
    journal.close()

    // A child holds it; this process tries, then the child lets go.
    let holder = try await blocking { () throws -> SendableProbe in
      let child = try Probe(["hold", directory])
      guard child.nextLine() == "opened" else { throw SpawnFailure(description: "the holder did not open") }
      return SendableProbe(child)
    }
    #expect(throws: JournalError.locked(path: directory)) {
      try Journal.open(directory: directory, identity: testIdentity, durability: .everyAction)
    }
    let status = try await blocking {
      holder.probe.closeInput()
      return holder.probe.exitStatus()
    }
    #expect(status == 0)
    _ = try Journal.open(directory: directory, identity: testIdentity, durability: .everyAction)
  }

  @Test("a full disk (RLIMIT_FSIZE): append throws EFBIG, the file keeps exactly the acknowledged records, and goes on")
  func fullDisk() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let directory = scratch.journal
    let (lines, status) = try await blocking { () throws -> ([String], Int32) in
      let child = try Probe(["fill", directory, "8000"])
      return (child.remainingLines(), child.exitStatus())
    }
    #expect(status == 0, "\(lines)")
    guard lines.count == 4, let acknowledged = UInt64(lines[0].dropFirst("acknowledged ".count)),
      let bytesAfterError = Int(lines[2].dropFirst("segment bytes ".count)),
      let afterLifting = UInt64(lines[3].dropFirst("acknowledged after lifting ".count))
    else {
      Issue.record("unexpected output: \(lines)")
      return
    }
    #expect(acknowledged > 0)
    #expect(lines[1].hasPrefix("error writing \"") && lines[1].hasSuffix("(errno \(EFBIG))"), "\(lines[1])")
    #expect(afterLifting == acknowledged + 5)
    // Right after the error, the segment held the acknowledged records and
    // not a byte of the batch that failed (the limit cut it mid-record).
    let header = JournalFormat.encode(.init(kind: .segment, identity: testIdentity, sequence: 1)).count
    #expect(bytesAfterError == header + (1...acknowledged).reduce(0) { $0 + frameSize(probeBody($1)) })

    // Every acknowledged record, the batch after the limit was lifted, and
    // nothing of the failed batch: no partial record was left in between.
    let (_, recovered) = try Journal.open(directory: directory, identity: testIdentity, durability: .everyAction)
    #expect(recovered.damage == [])
    #expect(
      try recovered.allRecords().map(\.untimed)
        == (1...afterLifting).map { JournalRecord(sequence: $0, body: probeBody($0)) })
  }

  @Test("kill -9 at random moments, 50 times: every acknowledged record is recovered in order, with nothing half there")
  func killNine() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let directory = scratch.journal
    var recoveredThrough: UInt64 = 0
    for round in 0..<50 {
      // The child is killed after a random number of acknowledgements
      // (0–15), while it is appending the next record or printing it.
      let acknowledgementsBeforeKill = Int.random(in: 0...15)
      let (lines, status) = try await blocking { () throws -> ([String], Int32) in
        let child = try Probe(["flood", directory])
        var lines: [String] = []
        while lines.count < 1 + acknowledgementsBeforeKill, let line = child.nextLine() { lines.append(line) }
        child.kill9()
        lines += child.remainingLines()
        return (lines, child.exitStatus())
      }
      #expect(status == 128 + SIGKILL, "round \(round): \(lines)")
      #expect(lines.first == "recovered \(recoveredThrough)", "round \(round): the child recovered something else")
      let acknowledged = lines.dropFirst().compactMap { UInt64($0.dropFirst("ack ".count)) }
      #expect(acknowledged == Array((recoveredThrough + 1)..<(recoveredThrough + 1 + UInt64(acknowledged.count))))

      let (journal, recovered) = try Journal.open(
        directory: directory, identity: testIdentity, durability: .everyAction)
      let last = try recovered.allRecords().last?.sequence ?? 0
      // Every acknowledged record (and at most the one being printed).
      #expect(last >= acknowledged.last ?? recoveredThrough, "round \(round)")
      #expect(last <= (acknowledged.last ?? recoveredThrough) + 1, "round \(round)")
      let expected = (1...max(last, 1)).filter { $0 <= last }.map { JournalRecord(sequence: $0, body: probeBody($0)) }
      #expect(try recovered.allRecords().map(\.untimed) == expected)
      // Nothing half there: the segment ends exactly after the last whole record.
      let segment = onlySegment(in: directory)
      let header = JournalFormat.encode(.init(kind: .segment, identity: testIdentity, sequence: 1)).count
      let wholeRecords = (1...max(last, 1)).filter { $0 <= last }.reduce(0) { $0 + frameSize(probeBody($1)) }
      #expect(contents(of: segment).count == header + wholeRecords, "round \(round)")
      #expect(recovered.damage.allSatisfy { $0.reason == .tornRecord }, "round \(round): \(recovered.damage)")
      journal.close()
      recoveredThrough = last
    }
  }
}

/// A probe handed from one blocking call to the next, used by one thread at a time.
// Safety: the test awaits each `blocking` call before the next, so only one
// thread touches the probe at any time, with the continuation's resume
// ordering the accesses.
struct SendableProbe: @unchecked Sendable {
  let probe: Probe
  init(_ probe: Probe) { self.probe = probe }
}
