import AsyncCore
import AsyncCoreJournal
import Synchronization

// The "entities" family (issue 32): a registry of cores by id, against
// what a service would write by hand and what SQLite costs alone, in one
// run.
//
// - Memory (EntityBenchmarks+Memory.swift), first, before other rows
//   grow the heap: heap bytes per active entity against an idle `Core`,
//   per passive entity, and the database's bytes on disk per entity.
// - Throughput (this file): a million distinct ids, one `dispatch` each
//   from 64 tasks, in memory against a dictionary of cores by hand, and
//   on a `SQLiteEntityStore` (at most 100,000 active) against SQLite
//   inserting the same rows alone (EntityBenchmarks+SQLite.swift).
// - Activation (EntityBenchmarks+Activation.swift): the first `dispatch`
//   to a passive entity stored as a snapshot and 10 records, against
//   reading the same rows with SQLite and decoding them.
//
// The raw SQLite baselines: EntityBaselineBenchmarks+SQLite.swift. The
// workload is the journal family's (JournalBenchmarks+Workload.swift):
// a Codable counter state and deposit action, every id sent the same one.

/// The "entities" family.
func entityCost(options: Options, report: Report) async {
  let plan = EntityBenchPlan(quick: options.quick)
  await entityMemory(plan: plan, report: report)
  await entityThroughput(plan: plan, report: report)
  await entityActivation(plan: plan, report: report)
}

/// How much the family does: a full run about 5 minutes on this kind of
/// machine (the durable million alone about 3.5: it runs at about 5k
/// entities/s), `--quick` about 6 s.
struct EntityBenchPlan: Sendable {
  let quick: Bool
  /// Distinct ids of the throughput rows, one `dispatch` each.
  var ids: Int { quick ? 10_000 : 1_000_000 }
  /// The active limit of the durable row: a tenth of the ids.
  var maxActive: Int { ids / 10 }
  /// Concurrent dispatching tasks, each with its share of the ids.
  let tasks = 64
  /// Rounds of the in-memory rows (a full round is a few seconds each); odd,
  /// so the median of the rounds' ratios is one round's.
  let rounds = 5
  /// Rounds of the durable rows (a round writes the whole database).
  let durableRounds = 1
  /// Entities of the activation row.
  var activations: Int { quick ? 200 : 2_000 }
  /// Records after each activation row entity's snapshot.
  let recordsAfterSnapshot = 10
  /// Entities (and cores) of the active-memory rows.
  var activeEntities: Int { quick ? 2_000 : 10_000 }
  /// Entities activated and passivated by the passive-memory row, and how
  /// many before them warm the heap and SQLite's caches.
  var passiveEntities: Int { quick ? 3_000 : 100_000 }
  var passiveWarmUp: Int { quick ? 1_000 : 40_000 }
}

/// The one action every id is sent: the same bytes for every record, so
/// the SQLite baseline inserts rows of the store's size without a codec.
let entityBenchAction = JournalBenchAction.deposit(account: 0, amount: 1)

/// A fresh state of an entity of the family.
@Sendable func entityBenchInitialState(_ id: Int) -> JournalBenchState { JournalBenchState() }

/// `tasks` child tasks each call `body` once for every id of its share
/// (the ids `task`, `task + tasks`, …, below `ids`); times until the last
/// returns. Operations are ids.
func dispatchOnceEach(ids: Int, tasks: Int, _ body: @escaping @Sendable (Int) async -> Void) async -> Sample {
  await measure(operations: ids) {
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<tasks {
        group.addTask {
          for id in stride(from: task, to: ids, by: tasks) { await body(id) }
        }
      }
    }
  }
}

/// The names of the family's rows.
enum EntityRow {
  static let inMemory = "`Entities` in memory: `dispatch` to each id"
  static let byHand = "a `Mutex<[Int: Core]>` by hand, a core made on first use, `dispatch`"
  static let durable = "`Entities` on `SQLiteEntityStore`, `.operatingSystem`: `dispatch` to each id, then `shutdown()`"
  static let sqliteAlone = "SQLite alone: the store's rows, in transactions of the store's average size"
  static let rawPerRecord = JournalRow.rawPerRecord
  static let rawSequential = JournalRow.rawSequential
}

// MARK: - Throughput

private func entityThroughput(plan: EntityBenchPlan, report: Report) async {
  let inMemory = await runInterleaved(
    [
      .baseline(EntityRow.byHand) { await coresByHand(ids: plan.ids, tasks: plan.tasks) },
      .core(EntityRow.inMemory) { await entitiesInMemory(ids: plan.ids, tasks: plan.tasks) },
    ], rounds: plan.rounds)
  report.record("entities", inMemory)
  let durable = await durableEntityRounds(plan: plan)
  let disk = await entityDiskFigure()
  let results = inMemory + durable.results + disk.results
  func rate(_ name: String) -> Double { results.first { $0.name == name }?.median ?? .nan }
  func inRounds(_ top: String, over bottom: String) -> Double {
    guard let top = results.first(where: { $0.name == top }), let bottom = results.first(where: { $0.name == bottom })
    else { return .nan }
    let ratios = zip(top.perSecond, bottom.perSecond).map { $0 / $1 }.sorted()
    guard !ratios.isEmpty else { return .nan }
    let middle = ratios.count / 2
    return ratios.count % 2 == 1 ? ratios[middle] : (ratios[middle - 1] + ratios[middle]) / 2
  }
  let memoryRatio = inRounds(EntityRow.inMemory, over: EntityRow.byHand)
  let durableRatio = inRounds(EntityRow.durable, over: EntityRow.sqliteAlone)
  report.add(
    Report.Table(
      title: "Entities: \(grouped(plan.ids)) distinct ids, one `dispatch` each from \(plan.tasks) tasks (entities/s)",
      headers: ["row", "median", "min – max", "ratio (median of the rounds' ratios)"],
      rows: (inMemory + durable.results).map { result in
        let ratio =
          switch result.name {
          case EntityRow.inMemory: "\(fixed(memoryRatio, 2))× by hand"
          case EntityRow.durable: "\(fixed(durableRatio, 2))× SQLite alone"
          default: "—"
          }
        return [
          result.isBaseline ? result.name : "**\(result.name)**", formatRate(result.median),
          "\(formatRate(result.min)) – \(formatRate(result.max))", ratio,
        ]
      },
      notes: [
        "Each row dispatches `.deposit(account: 0, amount: 1)` once to each of \(grouped(plan.ids)) ids, from "
          + "\(plan.tasks) child tasks of a detached task, each with its share of the ids (id mod \(plan.tasks)), "
          + "and times until the last `dispatch` returns, in \(plan.rounds) interleaved rounds. In memory, "
          + "`Entities(initialState:reducer:)` activates each id on its first `dispatch`; the baseline is what a "
          + "service writes without it, a `Mutex`-guarded dictionary that makes a `Core` with the same reducer on "
          + "first use, then `try await core.dispatch`. Both shut their cores down after the timing.",
        durable.note,
        disk.note,
      ].filter { !$0.isEmpty }))
  report.judge(
    "entities in memory, \(grouped(plan.ids)) ids, one `dispatch` each",
    requirement: "≥ 0.8 × a dictionary of cores by hand",
    value: memoryRatio, .atLeast, 0.8,
    detail: "median of the rounds' ratios; medians \(formatRate(rate(EntityRow.inMemory))) against "
      + "\(formatRate(rate(EntityRow.byHand)))",
    why: inMemoryWhy)
  durable.judge(report, durableRatio, rate)
}

/// Why the in-memory registry can fall short of the dictionary by hand.
private let inMemoryWhy =
  "both make the core under a lock on an id's first use and then `dispatch` to it; the registry also takes its lock "
  + "a second time per `dispatch` (`acquire`, then `release`), runs its lifecycle state machine's `use` and "
  + "`release` for each, keeps an entry and a recency tick per id, and tells its event streams of each "
  + "activation (not profiled further)."

/// `dispatch` to each id of an in-memory registry; its shutdown untimed.
func entitiesInMemory(ids: Int, tasks: Int) async -> Sample {
  let entities = Entities<Int, JournalBenchState, JournalBenchAction>(
    initialState: entityBenchInitialState, reducer: Reduce(journalBenchReduce))
  let sample = await dispatchOnceEach(ids: ids, tasks: tasks) { id in
    do {
      try await entities.dispatch(entityBenchAction, to: id)
    } catch {
      fatalError("AsyncCoreBenchmarks: an in-memory entity refused a dispatch: \(error)")
    }
  }
  let activations = entities.metrics.activations
  await entities.shutdown()
  if activations != ids { fatalError("AsyncCoreBenchmarks: \(ids) ids dispatched to, \(activations) activated") }
  return sample
}

/// The baseline of the in-memory row: cores by id in a dictionary behind
/// a `Mutex`, each made on its first use.
final class CoresByHand: Sendable {
  typealias EntityCore = Core<JournalBenchState, JournalBenchAction>
  private let cores = Mutex<[Int: EntityCore]>([:])

  func core(for id: Int) -> EntityCore {
    cores.withLock { cores in
      if let core = cores[id] { return core }
      let core = EntityCore(initialState: entityBenchInitialState(id), reducer: Reduce(journalBenchReduce))
      cores[id] = core
      return core
    }
  }

  var count: Int { cores.withLock { $0.count } }

  /// Shuts every core down, `tasks` at once, and forgets them.
  func shutdown(tasks: Int) async {
    let all = cores.withLock { cores in
      defer { cores = [:] }
      return Array(cores.values)
    }
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<tasks {
        group.addTask {
          for index in stride(from: task, to: all.count, by: tasks) { await all[index].shutdown() }
        }
      }
    }
  }
}

private func coresByHand(ids: Int, tasks: Int) async -> Sample {
  let cores = CoresByHand()
  let sample = await dispatchOnceEach(ids: ids, tasks: tasks) { id in
    do {
      try await cores.core(for: id).dispatch(entityBenchAction)
    } catch {
      fatalError("AsyncCoreBenchmarks: a core by hand refused a dispatch: \(error)")
    }
  }
  let count = cores.count
  await cores.shutdown(tasks: tasks)
  if count != ids { fatalError("AsyncCoreBenchmarks: \(ids) ids dispatched to, \(count) cores made") }
  return sample
}

// MARK: - The disk

/// This machine's disk in this run, as the journal family measures it:
/// `write` + `fdatasync` per record and one sequential write with one sync.
private func entityDiskFigure() async -> (results: [ThroughputResult], note: String) {
  let frames = journalFrames(encodeAll(journalBenchActions(20_000), with: JSONJournalCodec()))
  let frameBytes = Double(frames.reduce(0) { $0 + $1.count }) / Double(frames.count)
  let results = await runInterleaved(
    [
      .baseline(EntityRow.rawPerRecord) { rawPerRecordSync(frames, for: .milliseconds(200)) },
      .baseline(EntityRow.rawSequential) { rawSequentialWrite(frames) },
    ], rounds: 3)
  let syncs = results[0].median
  let sequential = results[1].median * frameBytes / 1e6
  return (
    results,
    "This machine's disk, in this run (as the journal family measures it, 3 rounds): \(fixed(syncs, 0)) "
      + "`write` + `fdatasync` of one \(fixed(frameBytes, 0))-byte record per second "
      + "(\(formatDuration(1 / syncs)) each), and \(fixed(sequential, 0)) MB/s written sequentially with one "
      + "`fdatasync` at the end. The durable rows never wait for the disk (`.operatingSystem`; SQLite's "
      + "checkpoints under `synchronous=NORMAL` sync it, the baseline's under `OFF` do not)."
  )
}

/// The durable throughput rows of one run: their figures, their note for
/// the table, and their target.
struct EntityDurableRounds {
  let results: [ThroughputResult]
  let note: String
  /// Judges the durable row's ratio (given) on `report`; `rate` reads a
  /// row's median.
  let judge: (_ report: Report, _ ratio: Double, _ rate: (String) -> Double) -> Void
}
