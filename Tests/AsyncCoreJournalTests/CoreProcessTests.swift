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

/// The probe's `Tally` (Tests/AsyncCoreJournalProbe/CoreModes.swift), read
/// back from the JSON lines it prints: for each producer, the highest index
/// reduced, a count, and a checksum over the order its actions came in.
struct ProbeTally: Codable, Equatable {
  var highest: [Int]
  var counts: [Int]
  var checksums: [Int]
  var total: Int
  var outOfOrder: Int

  /// The reduction of producer `p`'s actions `0..<prefixes[p]`, each
  /// producer's in order, in any interleaving of the producers: a plain
  /// loop, the reference the recovered states are compared with.
  init(prefixes: [Int]) {
    highest = prefixes.map { $0 - 1 }
    counts = prefixes
    checksums = prefixes.map { (0..<$0).reduce(0) { $0 &* 31 &+ $1 } }
    total = prefixes.reduce(0, +)
    outOfOrder = 0
  }

  /// The state in `line`, which starts with `prefix` and a space.
  init?(_ line: String, after prefix: String) {
    guard line.hasPrefix(prefix + " "),
      let tally = try? JSONJournalCodec().decode(ProbeTally.self, from: Array(line.utf8.dropFirst(prefix.count + 1)))
    else { return nil }
    self = tally
  }
}

/// Faults of a durable `Core` on a `FileJournal` made for real in a child process
/// (Tests/AsyncCoreJournalProbe, `core-…` modes): SIGKILL in the middle of a
/// flood of concurrent dispatches, a file-size limit.
@Suite("Journaled core faults in child processes", .serialized, .timeLimit(.minutes(5)))
struct CoreProcessTests {
  /// Rounds of each kill test: as many as named in a plain or release run;
  /// under a sanitizer, where each child is an instrumented process with
  /// four producers and the suite shares two cores with the rest of the
  /// run, a fifth (the in-process tests have one-minute limits).
  static func rounds(_ count: Int) -> Int {
    Environment.sanitizer == nil ? count : count / 5
  }

  @Test(
    "kill -9 mid-flood, 50 times, under everyAction: every acknowledged action is recovered, each producer's a prefix")
  func killNineEveryAction() async throws {
    try await floodAndKill(durability: "everyAction", kills: Self.rounds(50))
  }

  // Under the weaker policies the acknowledged actions survive too: a
  // record `append` returned for has been written (write(2)) to the page
  // cache, and SIGKILL ends the process, not the kernel, which keeps the
  // cache and writes it back. Only a power loss (or a kernel crash) before
  // the next sync would show them losing acknowledged actions, and no test
  // here can cut the power: what these rounds check is that recovery
  // always gives the reduction of a prefix of each producer's actions,
  // never a gap, a duplicate or a reordering.
  @Test(
    "kill -9 mid-flood, 20 times, under interval and operatingSystem: the recovered state is the reduction of prefixes",
    arguments: ["interval", "operatingSystem"])
  func killNineWeakerPolicies(durability: String) async throws {
    try await floodAndKill(durability: durability, kills: Self.rounds(20))
  }

  /// Starts `core-flood` on one journal `kills + 1` times. Each child
  /// recovers, prints its state, and floods from four producers; the test
  /// kills it after a random number of acknowledgements (0–40), and checks
  /// the next child's recovered state: exactly the reduction of the first
  /// `n` actions of each producer, with every acknowledged one among them
  /// and at most the one each producer had in flight beyond it.
  func floodAndKill(durability: String, kills: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let directory = scratch.journal
    let producers = 4
    // The highest index of each producer the previous child acknowledged
    // (or started from): recovery must keep it, and may add at most one.
    var acknowledged = [Int](repeating: -1, count: producers)
    var totalAcknowledged = 0
    for round in 0...kills {
      // The last child is only asked what it recovered.
      let acknowledgementsBeforeKill = round == kills ? 0 : Int.random(in: 0...40)
      let (lines, status) = try await blocking { () throws -> ([String], Int32) in
        let child = try Probe(["core-flood", directory, durability])
        var lines: [String] = []
        var acknowledgements = 0
        var recovered = false
        while !recovered || acknowledgements < acknowledgementsBeforeKill, let line = child.nextLine() {
          lines.append(line)
          if line.hasPrefix("recovered ") { recovered = true }
          if line.hasPrefix("ack ") { acknowledgements += 1 }
        }
        child.kill9()
        lines += child.remainingLines()
        return (lines, child.exitStatus())
      }
      let context = "\(durability), round \(round): \(lines.prefix(8))"
      #expect(status == 128 + SIGKILL, "\(context)", sourceLocation: sourceLocation)
      guard let recoveredAt = lines.firstIndex(where: { $0.hasPrefix("recovered ") }),
        let recovered = ProbeTally(lines[recoveredAt], after: "recovered")
      else {
        Issue.record("no recovered state: \(context)", sourceLocation: sourceLocation)
        return
      }
      // Opening reported only a torn last record, if anything (a kill in
      // the middle of an append).
      let damage = lines[..<recoveredAt]
      #expect(damage.allSatisfy { $0 == "damage tornRecord" }, "\(context)", sourceLocation: sourceLocation)

      // Exactly the reduction of a prefix of each producer's actions: no
      // gap, no duplicate, each producer's in order.
      #expect(recovered == ProbeTally(prefixes: recovered.counts), "\(context)", sourceLocation: sourceLocation)
      for producer in 0..<producers {
        // Every acknowledged action, and at most the one in flight.
        #expect(
          (acknowledged[producer]...acknowledged[producer] + 1).contains(recovered.highest[producer]),
          "\(context): producer \(producer) acknowledged through \(acknowledged[producer])",
          sourceLocation: sourceLocation)
      }

      // This child's acknowledgements: each producer's next indices, in order.
      acknowledged = recovered.highest
      for line in lines[(recoveredAt + 1)...] {
        let words = line.split(separator: " ")
        guard words.count == 3, words[0] == "ack", let producer = Int(words[1]), let index = Int(words[2]),
          (0..<producers).contains(producer)
        else {
          Issue.record("unexpected line \(line): \(context)", sourceLocation: sourceLocation)
          continue
        }
        #expect(index == acknowledged[producer] + 1, "\(context)", sourceLocation: sourceLocation)
        acknowledged[producer] = index
        totalAcknowledged += 1
      }
    }
    // The rounds did flood: several producers' actions were acknowledged.
    #expect(totalAcknowledged > 0, sourceLocation: sourceLocation)
  }

  @Test(
    "a full disk (RLIMIT_FSIZE): dispatch throws writeFailed EFBIG and the core shuts down; the journal holds exactly the acknowledged actions; lifted, a reopened core goes on"
  )
  func fullDisk() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let directory = scratch.journal
    let (lines, status) = try await blocking { () throws -> ([String], Int32) in
      let child = try Probe(["core-fill", directory, "8000"])
      return (child.remainingLines(), child.exitStatus())
    }
    #expect(status == 0, "\(lines)")
    guard lines.count == 7, let acknowledged = Int(lines[1].dropFirst("acknowledged ".count)),
      let recovered = ProbeTally(lines[4], after: "recovered"),
      let afterLifting = Int(lines[5].dropFirst("acknowledged after lifting ".count)),
      let lastState = ProbeTally(lines[6], after: "state")
    else {
      Issue.record("unexpected output: \(lines)")
      return
    }
    #expect(acknowledged > 0)
    // The diagnostics handler is told first, then the dispatcher.
    #expect(lines[0] == "journalFailed errno \(EFBIG)")
    #expect(lines[2] == "error writeFailed errno \(EFBIG)")
    // The failure shut the core down: nothing more is accepted.
    #expect(lines[3] == "send shutDown")
    // The journal holds exactly the acknowledged actions, not the refused one.
    #expect(recovered == ProbeTally(prefixes: [acknowledged]))
    // The limit lifted, a core on the journal goes on from the same index.
    #expect(afterLifting == acknowledged + 5)
    #expect(lastState == ProbeTally(prefixes: [acknowledged + 5]))

    let reopened = try await blocking { () throws -> ([String], Int32) in
      let child = try Probe(["core-recover", directory])
      return (child.remainingLines(), child.exitStatus())
    }
    #expect(reopened.1 == 0)
    #expect(reopened.0 == [lines[6].replacing("state ", with: "recovered ", maxReplacements: 1)])
  }
}
