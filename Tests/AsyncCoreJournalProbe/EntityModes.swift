// The probe's modes that run a registry of entities on one SQLite database
// (Tests/AsyncCoreSQLiteTests/EntityProcessTests.swift): kill -9 in the
// middle of a flood across many entities, with and without churn, and a
// full disk during a passivation's snapshot. main.swift dispatches to them.
import AsyncCore
import AsyncCoreJournal
import AsyncCoreSQLite
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What each entity holds: the sequence numbers of the actions it reduced,
/// in the order reduced. A reduction of the first `n` actions sent to it is
/// exactly `[0, 1, …, n - 1]`, so a lost, duplicated or reordered action
/// shows.
struct EntityLog: Codable, Sendable, Equatable {
  var sequences: [Int] = []
}

enum EntityLogAction: Codable, Sendable {
  case append(Int)
}

let reduceEntityLog = Reduce<EntityLog, EntityLogAction> { state, action in
  switch action {
  case .append(let sequence): state.sequences.append(sequence)
  }
  return .none
}

typealias EntityLogStore = SQLiteEntityStore<Int, EntityLog, EntityLogAction>
typealias EntityLogRegistry = Entities<Int, EntityLog, EntityLogAction>

/// The log as the parent reads it: the numbers joined by commas, `-` for none.
func line(_ log: EntityLog) -> String {
  log.sequences.isEmpty ? "-" : log.sequences.map(String.init).joined(separator: ",")
}

/// What the store and the registry report, one line each:
/// `diagnostic passivationFailed ENTITY <error>`, `diagnostic activationFailed ENTITY <error>`,
/// or `diagnostic <text>`.
func sayEntityDiagnostic(_ failure: EffectFailure) {
  switch failure.error as? CoreDiagnostic {
  case .passivationFailed(let entity, let error)?: say("diagnostic passivationFailed \(entity) \(error)")
  case .activationFailed(let entity, let error)?: say("diagnostic activationFailed \(entity) \(error)")
  default: say("diagnostic \(failure)")
  }
}

/// The store at `path` under `.everyAction` and a registry on it.
func openEntities(_ path: String, passivation: Passivation) -> EntityLogRegistry {
  do {
    let store = try EntityLogStore(path: path, durability: .everyAction, diagnostics: sayEntityDiagnostic)
    return Entities(
      store: store, passivation: passivation, diagnostics: sayEntityDiagnostic, initialState: { _ in EntityLog() },
      reducer: reduceEntityLog)
  } catch {
    fail("open: \(error)")
  }
}

/// The lines of standard input up to `go`, `end` or its end, and which
/// of those ended them (`end` for the end of input).
func readCommands() -> ([String], String) {
  var lines: [String] = []
  var current: [UInt8] = []
  var byte: UInt8 = 0
  while read(STDIN_FILENO, &byte, 1) == 1 {
    guard byte == UInt8(ascii: "\n") else {
      current.append(byte)
      continue
    }
    let text = String(decoding: current, as: UTF8.self)
    current = []
    if text == "go" || text == "end" { return (lines, text) }
    lines.append(text)
  }
  return (lines, "end")
}

/// Prints `state ID LOG P` for each of `ids` (P: passivations so far), 8
/// at a time, activating each; then `reported N`.
func report(_ ids: [Int], of entities: EntityLogRegistry) async {
  await withTaskGroup(of: Void.self) { group in
    var next = ids.makeIterator()
    func start() {
      guard let id = next.next() else { return }
      group.addTask {
        do {
          let log = try await entities.state(of: id)
          say("state \(id) \(line(log)) \(entities.metrics.passivations)")
        } catch {
          say("refused \(id) \(error)")
        }
      }
    }
    for _ in 0..<8 { start() }
    while await group.next() != nil { start() }
  }
  say("reported \(ids.count)")
}

/// `entities-flood DB ENTITIES MAXACTIVE BURST CURSORS`: a registry of
/// `ENTITIES` ids (0 to ENTITIES - 1) on the store at DB, `.everyAction`,
/// passivating over MAXACTIVE active entities (`none`: never). Prints
/// `opened`, then reads ids from standard input, one a line, up to `go`
/// or `end`, and reports each one's state (``report(_:of:)``).
///
/// After `end`, shuts the registry down and prints `shut down` and its
/// metrics. After `go`, floods until killed: one task per cursor of the
/// comma-separated CURSORS; task `t` of `T` owns the ids `id % T == t` and
/// visits them in order from position CURSORS[t] (id `t + T * position`,
/// wrapping around). A visit prints `state ID LOG P` (the entity's state,
/// activating it), sends it BURST - 1 actions with `send` and one with
/// `dispatch`, numbered from the log's length, and prints `ack ID LAST P`
/// when the dispatch returns (every action of the visit is then reduced
/// and journaled). One task per entity: each entity's actions are sent in
/// order, and at most one visit's are in flight at a kill.
func entitiesFlood(_ path: String, arguments: [String]) async {
  guard arguments.count == 4, let count = Int(arguments[0]), count > 0, let burst = Int(arguments[2]), burst >= 1
  else { fail("entities-flood needs ENTITIES MAXACTIVE BURST CURSORS") }
  let limit = arguments[1] == "none" ? nil : Int(arguments[1])
  if arguments[1] != "none", limit == nil { fail("MAXACTIVE is a number or none") }
  let cursors = arguments[3].split(separator: ",").compactMap { Int($0) }
  guard !cursors.isEmpty, count % cursors.count == 0 else { fail("CURSORS: one per task, dividing ENTITIES") }

  let entities = openEntities(path, passivation: Passivation(idleAfter: nil, maxActive: limit))
  say("opened")
  let (ids, command) = readCommands()
  await report(ids.map { Int($0) ?? -1 }, of: entities)
  guard command == "go" else {
    await entities.shutdown()
    let metrics = entities.metrics
    say("shut down activations \(metrics.activations) passivations \(metrics.passivations)")
    return
  }
  say("flooding")
  let tasks = cursors.count
  let perTask = count / tasks
  await withTaskGroup(of: Void.self) { group in
    for (task, cursor) in cursors.enumerated() {
      group.addTask {
        var position = cursor
        while true {
          let id = task + tasks * (position % perTask)
          do {
            let log = try await entities.state(of: id)
            say("state \(id) \(line(log)) \(entities.metrics.passivations)")
            var sequence = log.sequences.count
            for _ in 1..<burst {
              let result = entities.send(.append(sequence), to: id)
              guard result == .accepted else { fail("send to \(id): \(result)") }
              sequence += 1
            }
            try await entities.dispatch(.append(sequence), to: id)
            say("ack \(id) \(sequence) \(entities.metrics.passivations)")
          } catch {
            fail("entity \(id): \(error)")
          }
          position += 1
        }
      }
    }
  }
}

/// `entities-report DB`: reads ids from standard input until it ends,
/// prints each one's state (``report(_:of:)``), shuts down and prints
/// `shut down`.
func entitiesReport(_ path: String) async {
  await entitiesFlood(path, arguments: ["1", "none", "1", "0"])
}

/// The bytes of the file at `path` on disk, 0 if there is none.
func fileSize(_ path: String) -> UInt64 {
  var info = stat()
  return stat(path, &info) == 0 ? UInt64(info.st_size) : 0
}

/// `entities-fill DB`: a full disk during a passivation's snapshot. A
/// registry with at most one active entity; prints, in order:
///
///     ack 1 N               entity 1, each of 20 dispatches acknowledged
///     sizes DB WAL          the two files before the limit
///     limit BYTES           RLIMIT_FSIZE from now on, SIGXFSZ ignored
///     diagnostic passivationFailed 1 <error>   entity 2 activated: entity 1 is evicted,
///     event passivationFailed 1 <error>        and its snapshot fails
///     state 2 -             entity 2's state
///     active A failures F   the registry's metrics then
///     state 1 LOG           entity 1, still active, read with the limit on
///     lifted                the limit lifted
///     ack 1 N               5 more dispatches
///     shut down             every entity stored
func entitiesFill(_ path: String) async {
  let entities = openEntities(path, passivation: Passivation(idleAfter: nil, maxActive: 1))
  let events = entities.events()
  var acknowledged = 0
  func dispatch(_ count: Int) async {
    for _ in 0..<count {
      do {
        try await entities.dispatch(.append(acknowledged), to: 1)
      } catch {
        fail("dispatch \(acknowledged): \(error)")
      }
      say("ack 1 \(acknowledged)")
      acknowledged += 1
    }
  }
  await dispatch(20)
  let (database, wal) = (fileSize(path), fileSize(path + "-wal"))
  say("sizes \(database) \(wal)")
  // No file may grow past the larger of the two: a snapshot's commit has
  // to append frames to the WAL, whose end is where the limit is (the
  // database file grows only at a checkpoint). A limit of their sum would
  // leave the WAL room for a few more frames, enough for the snapshot.
  let limit = max(database, wal)
  limitFileSize(to: limit)
  say("limit \(limit)")
  let second: EntityLog
  do {
    second = try await entities.state(of: 2)
  } catch {
    fail("entity 2: \(error)")
  }
  // The passivation's outcome: what the test waits on, not a clock.
  outcome: for await event in events {
    switch event {
    case .passivationFailed(let id, let error):
      say("event passivationFailed \(id) \(error)")
      break outcome
    case .passivated(let id):
      say("event passivated \(id)")
      break outcome
    default: continue
    }
  }
  say("state 2 \(line(second))")
  let metrics = entities.metrics
  say("active \(metrics.active) failures \(metrics.passivationFailures)")
  do {
    say("state 1 \(line(try await entities.state(of: 1)))")
  } catch {
    fail("entity 1: \(error)")
  }
  liftFileSizeLimit()
  say("lifted")
  await dispatch(5)
  await entities.shutdown()
  say("shut down")
}
