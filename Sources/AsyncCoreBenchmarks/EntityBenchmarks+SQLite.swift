import AsyncCore
import AsyncCoreJournal
import AsyncCoreSQLite

// The entities family's durable rows (see EntityBenchmarks.swift): a
// million ids through `Entities` on a `SQLiteEntityStore`, at most a tenth
// active, against SQLite inserting the same rows alone
// (EntityBaselineBenchmarks+SQLite.swift); and the heap a durable entity
// holds, active and passive.

typealias EntityBenchStore = SQLiteEntityStore<Int, JournalBenchState, JournalBenchAction>

/// A store of the family's entities at `path`, under `.operatingSystem`
/// durability, or the end of the run.
func openEntityStore(_ path: String, snapshotEvery: Int? = 1_000) -> EntityBenchStore {
  do {
    return try EntityBenchStore(path: path, durability: .operatingSystem, snapshotEvery: snapshotEvery)
  } catch {
    fatalError("AsyncCoreBenchmarks: could not open a SQLiteEntityStore at \(path): \(error)")
  }
}

/// A registry of the family's entities on `store`.
func entityRegistry(
  on store: EntityBenchStore, passivation: Passivation
) -> Entities<Int, JournalBenchState, JournalBenchAction> {
  Entities(
    store: store, passivation: passivation, initialState: entityBenchInitialState,
    reducer: Reduce(journalBenchReduce))
}

/// `dispatch` of the family's action to `id`, or the end of the run.
func dispatchOrFail(_ entities: Entities<Int, JournalBenchState, JournalBenchAction>, to id: Int) async {
  do {
    try await entities.dispatch(entityBenchAction, to: id)
  } catch {
    fatalError("AsyncCoreBenchmarks: entity \(id) refused a dispatch: \(error)")
  }
}

/// The bytes of the family's record and of an entity's state after it:
/// every row the baseline writes is one of these.
private func entityRowBodies() -> (record: [UInt8], snapshot: [UInt8]) {
  var state = JournalBenchState()
  journalBenchReduce(&state, entityBenchAction)
  do {
    let codec = JSONJournalCodec()
    return (try codec.encode(entityBenchAction), try codec.encode(state))
  } catch {
    fatalError("AsyncCoreBenchmarks: JSONJournalCodec refused the entity workload: \(error)")
  }
}

/// One round of the durable row: a registry of at most `maxActive`
/// entities on a new store, one `dispatch` to each id from `tasks` tasks,
/// then `shutdown()` (every entity stored, the store closed), all timed.
private func durableRound(plan: EntityBenchPlan) async -> (
  sample: Sample, dispatching: Sample, writes: EntityStoreWrites, bytesOnDisk: Int
) {
  let scratch = ScratchDirectory("entities")
  defer { scratch.remove() }
  let store = openEntityStore(scratch.path + "/entities.sqlite")
  let entities = entityRegistry(on: store, passivation: Passivation(idleAfter: nil, maxActive: plan.maxActive))
  let clock = ContinuousClock()
  let start = clock.now
  let dispatching = await dispatchOnceEach(ids: plan.ids, tasks: plan.tasks) { id in
    await dispatchOrFail(entities, to: id)
  }
  await entities.shutdown()
  let sample = Sample(operations: plan.ids, duration: clock.now - start)
  let metrics = entities.metrics
  let writes = EntityStoreWrites(
    records: store.rowsCommitted, snapshots: metrics.passivations, commits: store.commitCount,
    maxActive: plan.maxActive)
  if metrics.activations != plan.ids || writes.records != plan.ids {
    fatalError(
      "AsyncCoreBenchmarks: \(plan.ids) ids dispatched to, \(metrics.activations) activated, "
        + "\(writes.records) records committed")
  }
  return (sample, dispatching, writes, store.bytesOnDisk())
}

/// The durable row and its baseline, in rounds: the store's round first,
/// since the baseline inserts what that round's store wrote.
func durableEntityRounds(plan: EntityBenchPlan) async -> EntityDurableRounds {
  let bodies = entityRowBodies()
  var durable: [Double] = []
  var dispatching: [Double] = []
  var alone: [Double] = []
  var writes: [EntityStoreWrites] = []
  var bytes = 0
  for _ in 0..<plan.durableRounds {
    let round = await Task.detached { await durableRound(plan: plan) }.value
    durable.append(round.sample.perSecond)
    dispatching.append(round.dispatching.perSecond)
    writes.append(round.writes)
    bytes = round.bytesOnDisk
    let baseline = await Task.detached {
      let scratch = ScratchDirectory("entities-alone")
      defer { scratch.remove() }
      return insertLikeTheStore(
        round.writes, recordBody: bodies.record, snapshotBody: bodies.snapshot, in: scratch.path)
    }.value
    alone.append(baseline.perSecond)
  }
  let results = [
    ThroughputResult(name: EntityRow.sqliteAlone, isBaseline: true, perSecond: alone),
    ThroughputResult(name: EntityRow.durable, isBaseline: false, perSecond: durable),
  ]
  let last = writes.last ?? EntityStoreWrites(records: 0, snapshots: 0, commits: 0, maxActive: plan.maxActive)
  let dispatchRate = dispatching.sorted()[dispatching.count / 2]
  let note =
    "The durable row opens a new `SQLiteEntityStore` (`.operatingSystem`: `synchronous=NORMAL`, no sync of its "
    + "own; `JSONJournalCodec`) in a new directory under the temporary directory, and a registry on it with "
    + "`Passivation(idleAfter: nil, maxActive: \(grouped(plan.maxActive)))`, dispatches as the in-memory rows do, "
    + "then calls `shutdown()`, which stores the entities still active and closes the store: the time runs "
    + "until it returns (until the last `dispatch` returned alone: \(formatRate(dispatchRate)), median). Each id "
    + "is activated (a read of the store, a durable core), its action journaled (a record committed by the "
    + "store's writer thread with other entities' appends) and reduced, and, once \(grouped(plan.maxActive)) "
    + "more are active, passivated (its snapshot committed, which deletes its record; its core shut down). "
    + "In the last round the store committed \(grouped(last.records)) records and \(grouped(last.snapshots)) "
    + "snapshots in \(grouped(last.commits)) transactions: \(fixed(Double(last.records) / Double(max(last.commits, 1)), 1)) "
    + "records, \(fixed(last.rowsPerCommit, 1)) rows with the snapshots, per commit; the database took "
    + "\(formatBytes(bytes)) on disk after the shutdown (\(fixed(Double(bytes) / Double(plan.ids), 1)) B an entity). "
    + "*SQLite alone* then writes, in the same round, the same rows on one connection (WAL, `synchronous=OFF`) "
    + "into the store's two tables: each id's record (`INSERT`) and, \(grouped(plan.maxActive)) ids later, its "
    + "snapshot (the store's upsert, then the delete of the record it covers), the last ones at the end, in as "
    + "many transactions as the store committed; keys, bodies and checksums are the store's. It does none of "
    + "the store's reads (an activation's, the writer's check of the entity's last sequence number) and no "
    + "codec. \(plan.durableRounds) round\(plan.durableRounds == 1 ? "" : "s")."
  return EntityDurableRounds(results: results, note: note) { report, ratio, rate in
    report.judge(
      "entities on SQLite, \(grouped(plan.ids)) ids, one `dispatch` each, at most \(grouped(plan.maxActive)) active",
      requirement: "≥ 0.5 × SQLite alone (the same rows, transactions of the same size)", value: ratio, .atLeast, 0.5,
      detail: "median of the rounds' ratios; medians \(formatRate(rate(EntityRow.durable))) against "
        + "\(formatRate(rate(EntityRow.sqliteAlone))); \(fixed(last.rowsPerCommit, 1)) rows per commit",
      why: durableWhy(last))
  }
}

/// Why the durable registry can fall short of SQLite alone.
private func durableWhy(_ writes: EntityStoreWrites) -> String {
  "SQLite alone inserts the rows back to back on one thread; each entity of the registry also pays its activation "
    + "(an unstructured `Task`, the store's read of its rows on the reader connection, a durable `Core` made and "
    + "recovered), its journaled `dispatch` (JSON encoding, the hop to the store's writer thread and back, "
    + "\(fixed(writes.rowsPerCommit, 1)) rows per commit), and its passivation (another `Task`, the state encoded, "
    + "the snapshot's hop to the writer, the core's shutdown), most of it unspecialised generic code from "
    + "another module (the in-memory row's reason, and the durable path's)."
}

// MARK: - Memory

/// Heap per active durable entity (one `dispatch` each) against a durable
/// `Core` opened on a store's journal and never sent anything.
func durableEntityMemory(plan: EntityBenchPlan) async -> EntityMemoryRows {
  let count = plan.activeEntities
  let (idle, entity) = await Task.detached {
    let idleScratch = ScratchDirectory("entities-idle")
    defer { idleScratch.remove() }
    let idleStore = openEntityStore(idleScratch.path + "/entities.sqlite")
    let idle = await heapPerItem(count) {
      var cores: [Core<JournalBenchState, JournalBenchAction>] = []
      cores.reserveCapacity(count)
      for id in 0..<count {
        do {
          let journal = try await idleStore.journal(for: id)
          cores.append(
            try await Core(
              initialState: entityBenchInitialState(id), journal: journal, reducer: Reduce(journalBenchReduce)))
        } catch {
          fatalError("AsyncCoreBenchmarks: could not open a durable core on the store: \(error)")
        }
      }
      return cores
    } release: { cores in
      for core in cores { await core.shutdown() }
    }
    await idleStore.close()
    let scratch = ScratchDirectory("entities-active")
    defer { scratch.remove() }
    let store = openEntityStore(scratch.path + "/entities.sqlite")
    let entity = await heapPerItem(count) {
      let entities = entityRegistry(on: store, passivation: .never)
      for id in 0..<count { await dispatchOrFail(entities, to: id) }
      return entities
    } release: { entities in
      await entities.shutdown()
    }
    return (idle, entity)
  }.value
  func bytes(_ value: Double?) -> String { value.map { "\(fixed($0, 0)) B" } ?? "—" }
  return EntityMemoryRows(
    rows: [
      ["baseline: an idle durable `Core` (on a `SQLiteEntityStore` journal, never sent anything)", bytes(idle)],
      ["**an active durable entity** (`Entities` on a `SQLiteEntityStore`, one `dispatch`)", bytes(entity)],
    ],
    note: "The durable rows open a store first (its connections, statements and writer thread are not counted), "
      + "then \(grouped(count)) durable cores on `store.journal(for:)`, or \(grouped(count)) entities of a "
      + "registry with `Passivation.never`, one `dispatch` each. The entity's figure includes what its record "
      + "adds to SQLite's page cache (the idle cores write nothing)."
  ) { report in
    guard let idle, let entity else { return }
    report.judge(
      "memory per active durable entity (SQLite store)", requirement: "≤ an idle durable `Core` + 256 B",
      value: entity - idle, .atMost, 256, digits: 0, unit: " B over an idle durable core",
      detail: "\(fixed(entity, 0)) B an entity, \(fixed(idle, 0)) B an idle durable core",
      why: "an active durable entity holds its journal's progress (the next sequence number, the recovery it "
        + "took), the registry's entry, what one journaled dispatch leaves in its core, and its share of "
        + "SQLite's page cache for the record it wrote.")
  }
}

/// Heap and resident bytes per passive entity: `passiveEntities` ids
/// activated (one `dispatch` each) and passivated by a registry that keeps
/// at most 100 active, after `passiveWarmUp` others did the same; then
/// the database's bytes on disk per entity once the registry shut down.
func passiveEntityMemory(plan: EntityBenchPlan) async -> EntityMemoryRows {
  let count = plan.passiveEntities
  let warmUp = plan.passiveWarmUp
  let maxActive = 100
  let (heap, resident, disk) = await Task.detached { () -> (Double?, Double, Double) in
    let scratch = ScratchDirectory("entities-passive")
    defer { scratch.remove() }
    let store = openEntityStore(scratch.path + "/entities.sqlite")
    let entities = entityRegistry(on: store, passivation: Passivation(idleAfter: nil, maxActive: maxActive))
    func settle() async {
      while true {
        let metrics = entities.metrics
        if metrics.activations - metrics.passivations <= maxActive && metrics.waitingCallers == 0 { break }
        try? await Task.sleep(for: .milliseconds(5))
      }
    }
    _ = await dispatchOnceEach(ids: warmUp, tasks: 64) { id in await dispatchOrFail(entities, to: id) }
    await settle()
    let heapBefore = heapInUse()
    let residentBefore = residentBytes()
    _ = await dispatchOnceEach(ids: count, tasks: 64) { id in await dispatchOrFail(entities, to: warmUp + id) }
    await settle()
    let heapAfter = heapInUse()
    let residentAfter = residentBytes()
    await entities.shutdown()
    let heap = heapBefore.flatMap { before in heapAfter.map { Double($0 - before) / Double(count) } }
    return (
      heap, Double(residentAfter - residentBefore) / Double(count),
      Double(store.bytesOnDisk()) / Double(warmUp + count)
    )
  }.value
  return EntityMemoryRows(
    rows: [
      ["**a passive entity**: heap", heap.map { "\(fixed($0, 1)) B" } ?? "—"],
      ["**a passive entity**: resident", "\(fixed(resident, 1)) B"],
      ["a passive entity: the database's bytes on disk (file and WAL, after the shutdown)", "\(fixed(disk, 1)) B"],
    ],
    note: "The passive rows: a registry on a new store with `Passivation(idleAfter: nil, maxActive: \(maxActive))` "
      + "activates \(grouped(warmUp)) ids (one `dispatch` each from 64 tasks) and lets them be passivated, then "
      + "\(grouped(count)) more; the heap in use and resident memory (/proc/self/statm) are read before and "
      + "after the second set, once every passivation over the limit has finished, and divided by "
      + "\(grouped(count)): what a passive entity leaves in the process (the first set warmed SQLite's page "
      + "caches, the registry's tables and malloc's free lists). Bytes on disk: the database file and its WAL "
      + "once `shutdown()` closed the store (a checkpoint), over all \(grouped(warmUp + count)) entities, each "
      + "one snapshot row."
  ) { report in
    let worst = max(heap ?? resident, resident)
    report.judge(
      "memory per passive entity", requirement: "≤ 64 B resident", value: worst, .atMost, 64, digits: 0,
      unit: " B",
      detail: "the larger of heap \(heap.map { fixed($0, 1) } ?? "—") B and resident \(fixed(resident, 1)) B; "
        + "\(fixed(disk, 1)) B on disk",
      why: "a passive entity should leave nothing in the process: what grows is the registry's tables (its "
        + "dictionary and recency queue do not shrink below their high-water mark) or SQLite's page cache, "
        + "which grows with the database up to its bound.")
  }
}
