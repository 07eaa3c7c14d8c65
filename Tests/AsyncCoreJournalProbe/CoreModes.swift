// The probe's modes that run a durable `Core` (Tests/AsyncCoreJournalTests/
// CoreProcessTests.swift): kill -9 in the middle of a flood, a full disk,
// and reopening to print what was recovered. main.swift dispatches to them.
import AsyncCore
import AsyncCoreJournal
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the journaled-core modes reduce: for each producer, the highest
/// index reduced, how many of its actions were reduced, and a checksum that
/// depends on the order they came in. The parent decodes it (its mirror is
/// `ProbeTally` in the tests) and compares it with the reduction of each
/// producer's first `n` actions, field for field.
struct Tally: Codable, Sendable, Equatable {
  /// The highest index reduced, by producer; -1 for none.
  var highest: [Int]
  /// Actions reduced, by producer.
  var counts: [Int]
  /// `checksum * 31 + index` over each producer's actions, in the order reduced.
  var checksums: [Int]
  /// Actions reduced in all.
  var total = 0
  /// Actions whose index did not follow their producer's previous one.
  var outOfOrder = 0

  init(producers: Int) {
    highest = Array(repeating: -1, count: producers)
    counts = Array(repeating: 0, count: producers)
    checksums = Array(repeating: 0, count: producers)
  }
}

enum TallyAction: Codable, Sendable {
  case add(producer: Int, index: Int)
}

let reduceTally = Reduce<Tally, TallyAction> { state, action in
  switch action {
  case .add(let producer, let index):
    if index != state.highest[producer] + 1 { state.outOfOrder += 1 }
    state.highest[producer] = max(state.highest[producer], index)
    state.counts[producer] += 1
    state.checksums[producer] = state.checksums[producer] &* 31 &+ index
    state.total += 1
  }
  return .none
}

/// The producers of `core-flood`.
let floodProducers = 4

/// The state as one line of JSON, keys sorted.
func line(_ tally: Tally) -> String {
  do {
    return String(decoding: try JSONJournalCodec().encode(tally), as: UTF8.self)
  } catch {
    fail("encoding the state: \(error)")
  }
}

func durability(named name: String) -> JournalDurability {
  switch name {
  case "everyAction": .everyAction
  case "interval": .interval(.milliseconds(5))
  case "operatingSystem": .operatingSystem
  default: fail("unknown durability \(name): everyAction, interval or operatingSystem")
  }
}

/// What a probe core reports to its diagnostics handler, one line each:
/// `damage <reason>`, `journalFailed errno <errno>`, `notJournaled <action>`, or `diagnostic <text>`.
func sayDiagnostic(_ failure: EffectFailure) {
  if case .damageMovedAside(let damage)? = failure.error as? JournalDiagnostic {
    return say("damage \(damage.reason)")
  }
  switch failure.error as? CoreDiagnostic {
  case .journalFailed(JournalError.writeFailed(_, let errno))?:
    say("journalFailed errno \(errno)")
  case .notJournaled(let action, _)?:
    say("notJournaled \(action)")
  default:
    say("diagnostic \(failure)")
  }
}

func openTally(
  _ directory: String, durability: JournalDurability, snapshotEvery: Int?, producers: Int
) async -> Core<Tally, TallyAction> {
  do {
    let journal = try FileJournal<Tally, TallyAction>(
      directory: directory, durability: durability, snapshotEvery: snapshotEvery, diagnostics: sayDiagnostic)
    return try await Core(
      initialState: Tally(producers: producers), journal: journal, diagnostics: sayDiagnostic, reducer: reduceTally)
  } catch {
    fail("open: \(error)")
  }
}

/// `core-flood DIR DURABILITY`: recovers, prints `recovered <state>`, then
/// four producers dispatch their next indices concurrently (so a drain's
/// slice holds several actions, one append each) and print `ack P I` as
/// each dispatch returns, until killed.
func coreFlood(_ directory: String, durability: JournalDurability) async {
  // Snapshots every 64 records: kills also land in a snapshot's write and
  // the rotation after it.
  let core = await openTally(directory, durability: durability, snapshotEvery: 64, producers: floodProducers)
  let start = await core.state
  say("recovered \(line(start))")
  await withTaskGroup(of: Void.self) { group in
    for producer in 0..<floodProducers {
      group.addTask {
        var index = start.highest[producer] + 1
        while true {
          do {
            try await core.dispatch(.add(producer: producer, index: index))
          } catch {
            fail("dispatch: \(error)")
          }
          say("ack \(producer) \(index)")
          index += 1
        }
      }
    }
  }
}

/// `core-recover DIR`: opens the journaled core, prints what opening
/// reported and `recovered <state>` (one producer's worth, as `core-fill`
/// writes), and shuts it down.
func coreRecover(_ directory: String, producers: Int) async {
  let core = await openTally(directory, durability: .everyAction, snapshotEvery: nil, producers: producers)
  say("recovered \(line(await core.state))")
  await core.shutdown()
}

/// `core-fill DIR BYTES`: a durable core on a new journal, its files
/// limited to BYTES (RLIMIT_FSIZE, SIGXFSZ ignored). Dispatches producer
/// 0's indices one at a time until one throws, and prints:
///
///     acknowledged N
///     error writeFailed errno E          (or: error <other error>)
///     journalFailed errno E              the diagnostics handler's line
///     send shutDown                      the core shut down with its journal
///     recovered <state>                  the limit lifted, the journal opened again
///     acknowledged after lifting M       5 more dispatched
///     state <state>
func coreFill(_ directory: String, limit: UInt64) async {
  let core = await openTally(directory, durability: .everyAction, snapshotEvery: nil, producers: 1)
  guard await core.state.total == 0 else { fail("core-fill expects a new journal") }
  limitFileSize(to: limit)

  var acknowledged = 0
  while true {
    do {
      try await core.dispatch(.add(producer: 0, index: acknowledged))
      acknowledged += 1
    } catch {
      say("acknowledged \(acknowledged)")
      if case .journal(JournalError.writeFailed(_, let errno)) = error {
        say("error writeFailed errno \(errno)")
      } else {
        say("error \(error)")
      }
      break
    }
  }
  await core.shutdown()
  say("send \(core.send(.add(producer: 0, index: acknowledged)))")

  liftFileSizeLimit()
  let reopened = await openTally(directory, durability: .everyAction, snapshotEvery: nil, producers: 1)
  say("recovered \(line(await reopened.state))")
  for _ in 0..<5 {
    do {
      try await reopened.dispatch(.add(producer: 0, index: acknowledged))
    } catch {
      fail("dispatch after lifting the limit: \(error)")
    }
    acknowledged += 1
  }
  say("acknowledged after lifting \(acknowledged)")
  say("state \(line(await reopened.state))")
  await reopened.shutdown()
}
