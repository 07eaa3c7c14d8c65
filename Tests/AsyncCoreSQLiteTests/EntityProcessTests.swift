import AsyncCore
import AsyncCoreJournal
import AsyncCoreProcessTestSupport
import AsyncCoreSQLite
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Faults of a registry of entities on one SQLite database, made for real:
/// SIGKILL of a child process in the middle of a flood across 10,000
/// entities, with and without passivations; a flipped byte in one entity's
/// rows; a file-size limit during a passivation's snapshot. The children
/// are AsyncCoreJournalProbe's `entities-…` modes
/// (Tests/AsyncCoreJournalProbe/EntityModes.swift), whose entities hold the
/// log of the sequence numbers they reduced.
@Suite("Entities' faults in child processes", .serialized, .timeLimit(.minutes(5)))
struct EntityProcessTests {
  static let entityCount = 10_000
  /// The child's flooding tasks; each owns the ids `id % floodTasks`.
  static let floodTasks = 8

  /// Kills of each kill test: as many as named in a plain or release run,
  /// a fifth under a sanitizer (as the journal's kill tests).
  static func kills(_ count: Int) -> Int {
    Environment.sanitizer == nil ? count : max(count / 5, 2)
  }

  @Test(
    "kill -9 mid-flood across 10,000 entities under everyAction, 20 times: each entity recovers the reduction of a prefix of its actions, with every acknowledged one and none twice"
  )
  func killNineMidFlood() async throws {
    try await floodAndKill(maxActive: nil, burst: 1, kills: Self.kills(20))
  }

  @Test(
    "kill -9 amid passivations and activations (at most 50 active), 20 times: nothing acknowledged is lost, nothing is reduced twice"
  )
  func killNineDuringChurn() async throws {
    try await floodAndKill(maxActive: 50, burst: 3, kills: Self.kills(20))
  }

  /// Starts `entities-flood` on one database `kills + 1` times; the
  /// database carries over. Each child first reports the state of every
  /// entity the last one visited (and of 100 others), then floods from 8
  /// tasks, each visiting its entities in turn where the last child's left
  /// off: a visit reads the entity's state, sends it `burst` actions (the
  /// last with `dispatch`) and prints the acknowledgement. The test kills
  /// it after a random number of acknowledgements (or, one round in four,
  /// of states reported, activations in the middle), and the next child's
  /// report is checked; the last child reports all 10,000 and shuts down.
  ///
  /// Each state read is checked against what the test knows of that
  /// entity: `[0, 1, …, n - 1]` (a prefix, in order, nothing twice), with
  /// `n` at least every action acknowledged or read before, and at most
  /// those a visit may have had in flight at the kill. A state is read
  /// before every visit, so an entity is never sent more on top of a loss
  /// that was not seen.
  ///
  /// With `maxActive`, every kill lands once the child has passivated
  /// entities (its lines carry its count).
  func floodAndKill(
    maxActive: Int?, burst: Int, kills: Int, sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let folder = try ScratchFolder()
    defer { folder.remove() }
    let database = folder.path + "/entities.sqlite"
    let seed = Environment.string("ASYNCCORE_SEED").flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
    var random = SplitMix64(seed: seed)
    let count = Self.entityCount
    let tasks = Self.floodTasks
    var ledger = EntityLedger(count: count, burst: burst)
    var cursors = [Int](repeating: 0, count: tasks)
    var visited: [Int] = []
    var acknowledgements = 0
    for round in 0...kills {
      let last = round == kills
      var ids = visited
      if last {
        ids = Array(0..<count)
      } else {
        ids += (0..<100).map { _ in Int.random(in: 0..<count, using: &random) }
      }
      let plan: KillPlan =
        last
        ? .never
        : random.chance(25)
          ? .afterStates(Int.random(in: 0...(ids.count + 20), using: &random))
          : .afterAcknowledgements(Int.random(in: 0...1_500, using: &random))
      let arguments = [
        "entities-flood", database, "\(count)", maxActive.map(String.init) ?? "none", "\(burst)",
        cursors.map(String.init).joined(separator: ","),
      ]
      let commands = ids.map { "\($0)\n" }.joined() + (last ? "end\n" : "go\n")
      let churn = maxActive != nil
      let (lines, status) = try await offThread { () throws -> ([String], Int32) in
        let child = try ChildProcess(arguments)
        var lines: [String] = []
        guard let first = child.nextLine() else { return ([], child.exitStatus()) }
        lines.append(first)
        child.send(Array(commands.utf8))
        child.closeInput()
        var counted = 0
        var churning = !churn
        // A registry that never passivates would flood on: its kill comes
        // after as many lines as four rounds of all entities, and fails.
        while !(churning && plan.isDue(counted)), churning || lines.count < 4 * count, let line = child.nextLine() {
          lines.append(line)
          if !churning, line.hasPrefix("state ") || line.hasPrefix("ack "),
            let passivations = Int(line.split(separator: " ").last ?? ""), passivations > 0
          {
            churning = true
          }
          if churning, plan.counts(line) { counted += 1 }
        }
        if plan != .never { child.kill9() }
        lines += child.remainingLines()
        return (lines, child.exitStatus())
      }
      let context = "seed \(seed), round \(round) of \(kills), \(plan)"
      #expect(status == (last ? 0 : 128 + SIGKILL), "\(context): \(lines.suffix(5))", sourceLocation: sourceLocation)
      guard lines.first == "opened" else {
        Issue.record("\(context): the child did not open the store: \(lines.prefix(5))", sourceLocation: sourceLocation)
        return
      }
      let outcome = ledger.read(lines.dropFirst())
      if !outcome.problems.isEmpty {
        Issue.record(
          "\(context): \(outcome.problems.count) problems, the first: \(outcome.problems.prefix(10))",
          sourceLocation: sourceLocation)
      }
      acknowledgements += outcome.acknowledged.count
      for id in outcome.acknowledged { cursors[id % tasks] = id / tasks + 1 }
      visited = outcome.visited
      if churn, !last {
        #expect(
          outcome.passivations > 0, "\(context): killed before any passivation", sourceLocation: sourceLocation)
      }
      if last {
        // Every entity was read, each once, and checked above.
        #expect(outcome.reported == Array(0..<count), "\(context)", sourceLocation: sourceLocation)
        #expect(lines.last?.hasPrefix("shut down") == true, "\(context): \(lines.suffix(3))")
      }
    }
    // The children did flood, and across the entities: each task visits its
    // entities in turn, so most acknowledgements are of distinct ones (a
    // fixed count failed under a sanitizer's fifth of the kills).
    #expect(acknowledgements > 20 * kills / 2, "seed \(seed)", sourceLocation: sourceLocation)
    #expect(
      ledger.entitiesWithActions >= min(acknowledgements, count) / 2, "seed \(seed), \(acknowledgements) acknowledged",
      sourceLocation: sourceLocation)
  }

  // MARK: - Damage to one entity

  /// Where the flipped byte goes: into an entity's snapshot (written by the
  /// registry's shutdown) or into one of its records (written by a core on
  /// the store's journal, with no snapshot after).
  enum DamagedRow: String, CaseIterable, CustomTestStringConvertible {
    case snapshot
    case record
    var testDescription: String { rawValue }
  }

  @Test(
    "a flipped byte in one entity's rows: its dispatch and state(of:) throw the store's damage error naming it, events and diagnostics report the failed activation, the other entities are exactly as written",
    arguments: DamagedRow.allCases)
  func damageToOneEntity(row: DamagedRow) async throws {
    let folder = try ScratchFolder()
    defer { folder.remove() }
    let database = folder.path + "/entities.sqlite"
    let entities = (0..<5).map { "e\($0)" }
    func marker(_ entity: Int, _ index: Int) -> String { "MARK-\(entity)-\(index)-ZQXJ" }
    func written(_ entity: Int) -> Notes { Notes(lines: (1...3).map { marker(entity, $0) }) }

    let store = try NoteStore(path: database, diagnostics: { _ in })
    switch row {
    case .snapshot:
      let registry = Entities(
        store: store, passivation: .never, diagnostics: { _ in }, initialState: { _ in Notes() },
        reducer: reduceNotes)
      for (index, id) in entities.enumerated() {
        for line in written(index).lines { try await registry.dispatch(.add(line), to: id) }
      }
      await registry.shutdown()  // a snapshot of each, and the store closed
    case .record:
      for (index, id) in entities.enumerated() {
        let core = try await Core(
          initialState: Notes(), journal: try await store.journal(for: id), reducer: reduceNotes)
        for line in written(index).lines { try await core.dispatch(.add(line)) }
        await core.shutdown()
      }
      await store.close()
    }
    // The close checkpointed: every row is in the database file. The second
    // line of e2 is unique in it (in its snapshot, or in its record 2).
    let bytes = try fileContents(database)
    let found = byteOffsets(of: Array(marker(2, 2).utf8), in: bytes)
    #expect(found.count == 1)
    try flipOneByte(at: try #require(found.first) + 7, in: database)
    let damage = SQLiteStoreError.damaged(entity: "\"e2\"", sequence: row == .snapshot ? 3 : 2)

    let failures = Mutex<[EffectFailure]>([])
    let storeFailures = Mutex<[EffectFailure]>([])
    let reopened = try NoteStore(
      path: database, diagnostics: { failure in storeFailures.withLock { $0.append(failure) } })
    let registry = Entities(
      store: reopened, passivation: .never, diagnostics: { failure in failures.withLock { $0.append(failure) } },
      initialState: { _ in Notes() }, reducer: reduceNotes)
    let events = registry.events()

    func thrown(_ body: () async throws(CoreError) -> Void) async -> CoreError? {
      do throws(CoreError) {
        try await body()
        return nil
      } catch {
        return error
      }
    }
    // Refused on every activation, never repaired or started over.
    let dispatched = await thrown { () async throws(CoreError) in try await registry.dispatch(.add("more"), to: "e2") }
    let read = await thrown { () async throws(CoreError) in _ = try await registry.state(of: "e2") }
    for error in [dispatched, read] {
      guard case .journal(let inner)? = error else {
        Issue.record("expected CoreError.journal, got \(String(describing: error))")
        continue
      }
      #expect(inner as? SQLiteStoreError == damage)
    }
    // A send is accepted, then refused with its entity: the diagnostics say so.
    #expect(registry.send(.add("sent"), to: "e2") == .accepted)

    var failedActivations: [String] = []
    for await event in events {
      guard case .activationFailed(let id, let error) = event else {
        Issue.record("unexpected event \(event)")
        continue
      }
      #expect(error as? SQLiteStoreError == damage)
      failedActivations.append(id)
      if failedActivations.count == 3 { break }
    }
    #expect(failedActivations == ["e2", "e2", "e2"])

    // Every other entity activates as written, and goes on.
    for (index, id) in entities.enumerated() where id != "e2" {
      #expect(try await registry.state(of: id) == written(index))
    }
    try await registry.dispatch(.add("after"), to: "e0")
    #expect(try await registry.state(of: "e0").lines.last == "after")
    #expect(registry.metrics.activationFailures == 3)

    let reported = failures.withLock { $0 }
    var activationFailures = 0
    var refused: [String] = []
    for failure in reported {
      switch failure.error as? CoreDiagnostic {
      case .activationFailed(let entity, let error)?:
        #expect(entity == "e2")
        #expect(error as? SQLiteStoreError == damage)
        activationFailures += 1
      case .notActivated(let entity, let action, let error)?:
        #expect(entity == "e2")
        #expect(error as? SQLiteStoreError == damage)
        refused.append("\(action)")
      default:
        Issue.record("unexpected diagnostic \(failure)")
      }
    }
    #expect(activationFailures == 3)
    #expect(refused == ["\(NoteAction.add("sent"))"])
    // The store told its own handler of each refusal, typed.
    #expect(storeFailures.withLock { $0.map { $0.error as? SQLiteStoreError } } == [damage, damage, damage])
    await registry.shutdown()

    // Still refused after a restart: the damage stays where it is.
    let third = try NoteStore(path: database, diagnostics: { _ in })
    let again = Entities(
      store: third, passivation: .never, diagnostics: { _ in }, initialState: { _ in Notes() }, reducer: reduceNotes)
    let error = await thrown { () async throws(CoreError) in _ = try await again.state(of: "e2") }
    guard case .journal(let inner)? = error else {
      Issue.record("expected CoreError.journal, got \(String(describing: error))")
      await again.shutdown()
      return
    }
    #expect(inner as? SQLiteStoreError == damage)
    #expect(try await again.state(of: "e1") == written(1))
    await again.shutdown()
  }

  // MARK: - A full disk during a passivation

  @Test(
    "a full disk (RLIMIT_FSIZE) during a passivation's snapshot: the passivation fails and is reported, the entity stays active with every acknowledged action; the limit lifted, nothing is lost"
  )
  func fullDiskDuringPassivation() async throws {
    let folder = try ScratchFolder()
    defer { folder.remove() }
    let database = folder.path + "/entities.sqlite"
    let (lines, status) = try await offThread { () throws -> ([String], Int32) in
      let child = try ChildProcess(["entities-fill", database])
      return (child.remainingLines(), child.exitStatus())
    }
    #expect(status == 0, "\(lines)")
    let before = (0..<20).map { "ack 1 \($0)" }
    let after = (20..<25).map { "ack 1 \($0)" }
    guard lines.count == 34, Array(lines[0..<20]) == before else {
      Issue.record("unexpected output: \(lines)")
      return
    }
    #expect(lines[20].hasPrefix("sizes "))
    #expect(lines[21].hasPrefix("limit "))
    // Entity 2's activation put entity 1 over the limit of one active, and
    // its snapshot's commit could not grow the WAL: the diagnostics handler
    // is told, then the events' stream, the store's error.
    #expect(lines[22].hasPrefix("diagnostic passivationFailed 1 AsyncCoreSQLite: "), "\(lines[22])")
    #expect(lines[23].hasPrefix("event passivationFailed 1 AsyncCoreSQLite: "), "\(lines[23])")
    #expect(lines[24] == "state 2 -")
    // Entity 1 stays active beside entity 2, with every acknowledged action.
    #expect(lines[25] == "active 2 failures 1")
    #expect(lines[26] == "state 1 " + (0..<20).map(String.init).joined(separator: ","))
    #expect(lines[27] == "lifted")
    #expect(Array(lines[28..<33]) == after)
    #expect(lines[33] == "shut down")

    let (reopened, reopenedStatus) = try await offThread { () throws -> ([String], Int32) in
      let child = try ChildProcess(["entities-report", database])
      child.send(Array("1\n2\n".utf8))
      child.closeInput()
      return (child.remainingLines(), child.exitStatus())
    }
    #expect(reopenedStatus == 0, "\(reopened)")
    #expect(
      Set(reopened) == [
        "opened", "state 1 " + (0..<25).map(String.init).joined(separator: ",") + " 0", "state 2 - 0", "reported 2",
        "shut down activations 2 passivations 2",
      ], "\(reopened)")
  }
}

// MARK: - The flood's bookkeeping

/// When the test kills a flooding child.
private enum KillPlan: Equatable, CustomStringConvertible {
  /// After that many acknowledgements.
  case afterAcknowledgements(Int)
  /// After that many states read (reported, or at the start of a visit).
  case afterStates(Int)
  /// Not: the child ends by itself.
  case never

  func counts(_ line: String) -> Bool {
    switch self {
    case .afterAcknowledgements: line.hasPrefix("ack ")
    case .afterStates: line.hasPrefix("state ")
    case .never: false
    }
  }

  func isDue(_ counted: Int) -> Bool {
    switch self {
    case .afterAcknowledgements(let count), .afterStates(let count): counted >= count
    case .never: false
    }
  }

  var description: String {
    switch self {
    case .afterAcknowledgements(let count): "killed after \(count) acknowledgements"
    case .afterStates(let count): "killed after \(count) states read"
    case .never: "not killed"
    }
  }
}

/// What the test knows of each entity, from the children's lines: the
/// fewest actions its state may hold (every one acknowledged, or read in
/// a state before) and the most (those a visit may have had in flight).
private struct EntityLedger {
  var least: [Int]
  var most: [Int]
  let burst: Int

  init(count: Int, burst: Int) {
    least = Array(repeating: 0, count: count)
    most = Array(repeating: 0, count: count)
    self.burst = burst
  }

  var entitiesWithActions: Int { least.count(where: { $0 > 0 }) }

  /// What one child's lines came to.
  struct Outcome {
    var problems: [String] = []
    /// The ids acknowledged, in order.
    var acknowledged: [Int] = []
    /// The ids a visit began with, in order.
    var visited: [Int] = []
    /// The ids reported before the flood, sorted.
    var reported: [Int] = []
    /// The child's passivations, as its last line with the count said.
    var passivations = 0
  }

  /// Checks each state line against what is known, then learns from it.
  mutating func read(_ lines: ArraySlice<String>) -> Outcome {
    var outcome = Outcome()
    var flooding = false
    for line in lines {
      let words = line.split(separator: " ").map(String.init)
      switch words.first {
      case "state" where words.count == 4:
        guard let id = Int(words[1]), least.indices.contains(id), let passivations = Int(words[3]) else {
          outcome.problems.append("unreadable: \(line)")
          continue
        }
        outcome.passivations = passivations
        let log = words[2] == "-" ? [] : words[2].split(separator: ",").map { Int($0) ?? -1 }
        if log != Array(0..<log.count) {
          outcome.problems.append("entity \(id) holds \(words[2]): not each action once, in order")
        }
        if !(least[id]...most[id]).contains(log.count) {
          outcome.problems.append(
            "entity \(id) holds \(log.count) actions, not \(least[id])…\(most[id]) (acknowledged or read before)")
        }
        least[id] = log.count
        // A visit sends up to `burst` more; a report, none.
        most[id] = log.count + (flooding ? burst : 0)
        if flooding { outcome.visited.append(id) } else { outcome.reported.append(id) }
      case "ack" where words.count == 4:
        guard let id = Int(words[1]), least.indices.contains(id), let last = Int(words[2]),
          let passivations = Int(words[3])
        else {
          outcome.problems.append("unreadable: \(line)")
          continue
        }
        outcome.passivations = passivations
        if last + 1 != most[id] { outcome.problems.append("acknowledged \(id) \(last), not its visit's last") }
        least[id] = last + 1
        outcome.acknowledged.append(id)
      case "flooding":
        flooding = true
      case "reported" where words.count == 2, "opened":
        continue
      case "shut" where line.hasPrefix("shut down "):
        continue
      default:
        outcome.problems.append("unexpected: \(line)")
      }
    }
    outcome.reported.sort()
    return outcome
  }
}

// MARK: - In-process entities for the damage test

private struct Notes: Codable, Sendable, Equatable {
  var lines: [String] = []
}

private enum NoteAction: Codable, Sendable {
  case add(String)
}

private let reduceNotes = Reduce<Notes, NoteAction> { state, action in
  switch action {
  case .add(let line): state.lines.append(line)
  }
  return .none
}

private typealias NoteStore = SQLiteEntityStore<String, Notes, NoteAction>

// MARK: - Child processes and files

/// The AsyncCoreJournalProbe executable as a child process, read a line at
/// a time with blocking reads (on a thread of its own, through
/// ``offThread(_:)``).
private final class ChildProcess {
  let pid: pid_t
  private let input: Int32
  private var inputClosed = false
  private let output: Int32
  private var buffer: [UInt8] = []
  private var ended = false
  private var waited: Int32?

  init(_ arguments: [String]) throws {
    let child = try spawn(try productPath("AsyncCoreJournalProbe"), arguments: arguments)
    pid = child.pid
    input = child.input
    output = child.output
  }

  deinit {
    closeInput()
    close(output)
    if waited == nil {
      kill(pid, SIGKILL)
      _ = exitStatus()
    }
  }

  /// The next line of its output, or `nil` at its end.
  func nextLine() -> String? {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      if ended {
        guard !buffer.isEmpty else { return nil }
        defer { buffer.removeAll() }
        return String(decoding: buffer, as: UTF8.self)
      }
      var chunk = [UInt8](repeating: 0, count: 65_536)
      let count = read(output, &chunk, chunk.count)
      if count < 0, errno == EINTR { continue }
      if count <= 0 {
        ended = true
      } else {
        buffer += chunk[..<count]
      }
    }
  }

  func remainingLines() -> [String] {
    var lines: [String] = []
    while let line = nextLine() { lines.append(line) }
    return lines
  }

  /// Writes `bytes` to its standard input (blocking while its pipe is full).
  func send(_ bytes: [UInt8]) {
    var done = 0
    while done < bytes.count {
      let result = bytes[done...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
      if result < 0, errno == EINTR { continue }
      if result <= 0 { return }
      done += result
    }
  }

  /// Ends its standard input, once.
  func closeInput() {
    guard !inputClosed else { return }
    inputClosed = true
    close(input)
  }

  func kill9() {
    kill(pid, SIGKILL)
  }

  /// Waits for it to end: the exit code, or 128 + the signal.
  @discardableResult
  func exitStatus() -> Int32 {
    if let waited { return waited }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    waited = code
    return code
  }
}

/// Runs `body`, which blocks (`read`, `waitpid`), on a thread of its own.
private func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    onThreadOfItsOwn { continuation.resume(with: Result { try body() }) }
  }
}

/// A fresh folder under the system's temporary one, removed at ``remove()``.
private struct ScratchFolder {
  let path: String

  init() throws {
    var template = Array((NSTemporaryDirectory() + "/entity-faults-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
    path = String(cString: made)
  }

  func remove() {
    try? FileManager.default.removeItem(atPath: path)
  }
}

private func fileContents(_ path: String) throws -> [UInt8] {
  Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Where `needle` starts in `haystack`, every time.
private func byteOffsets(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
  guard needle.count <= haystack.count else { return [] }
  return (0...(haystack.count - needle.count)).filter { start in
    haystack[start] == needle[0] && haystack[start..<start + needle.count].elementsEqual(needle)
  }
}

/// Replaces the byte at `offset` of the file at `path` with its complement.
private func flipOneByte(at offset: Int, in path: String) throws {
  let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
  defer { try? handle.close() }
  try handle.seek(toOffset: UInt64(offset))
  let byte = try handle.read(upToCount: 1) ?? Data()
  try handle.seek(toOffset: UInt64(offset))
  try handle.write(contentsOf: Data([~(byte.first ?? 0)]))
}
