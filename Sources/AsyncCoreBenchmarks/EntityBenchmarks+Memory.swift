import AsyncCore
import CHeapInfo

// The entities family's memory (see EntityBenchmarks.swift): heap bytes in
// use (glibc's `mallinfo2()` after `malloc_trim(0)`, stable to the byte
// where resident pages are not) while N entities or cores are held,
// divided by N. Every set is measured on its own: taken, counted, let go.

/// The heap malloc has handed out and not taken back, in bytes; nil
/// where the C library cannot say (not glibc 2.33 or later).
func heapInUse() -> Int? {
  let bytes = asynccore_heap_in_use()
  return bytes < 0 ? nil : bytes
}

/// What `make` holds, in heap bytes per item: the heap in use after it
/// returned less before, over `count`. `make` returns what it made, held
/// until the reading, then `release`d. nil without a heap count.
func heapPerItem<Held>(
  _ count: Int, make: () async -> Held, release: (Held) async -> Void = { _ in }
) async -> Double? {
  guard let before = heapInUse() else { return nil }
  let held = await make()
  let after = heapInUse() ?? before
  await release(held)
  return Double(after - before) / Double(count)
}

/// The active-memory rows: heap per in-memory entity (one `dispatch` each,
/// all active) against an idle `Core` and a `Core` after one dispatch, and
/// the durable kind (EntityBenchmarks+SQLite.swift); then the passive row.
func entityMemory(plan: EntityBenchPlan, report: Report) async {
  let count = plan.activeEntities
  let (idle, dispatched, entity) = await Task.detached {
    let idle = await heapPerItem(count) {
      (0..<count).map { id in
        Core(initialState: entityBenchInitialState(id), reducer: Reduce(journalBenchReduce))
      }
    }
    let dispatched = await heapPerItem(count) {
      var cores: [Core<JournalBenchState, JournalBenchAction>] = []
      cores.reserveCapacity(count)
      for id in 0..<count {
        let core = Core(initialState: entityBenchInitialState(id), reducer: Reduce(journalBenchReduce))
        do { try await core.dispatch(entityBenchAction) } catch { fatalError("AsyncCoreBenchmarks: \(error)") }
        cores.append(core)
      }
      return cores
    } release: { cores in
      for core in cores { await core.shutdown() }
    }
    let entity = await heapPerItem(count) {
      let entities = Entities<Int, JournalBenchState, JournalBenchAction>(
        initialState: entityBenchInitialState, reducer: Reduce(journalBenchReduce))
      for id in 0..<count {
        do { try await entities.dispatch(entityBenchAction, to: id) } catch {
          fatalError("AsyncCoreBenchmarks: \(error)")
        }
      }
      return entities
    } release: { entities in
      await entities.shutdown()
    }
    return (idle, dispatched, entity)
  }.value
  let durable = await durableEntityMemory(plan: plan)
  let passive = await passiveEntityMemory(plan: plan)
  func bytes(_ value: Double?) -> String { value.map { "\(fixed($0, 0)) B" } ?? "—" }
  var rows = [
    ["baseline: an idle `Core` (made, never sent anything)", bytes(idle)],
    ["a `Core` after one `dispatch`", bytes(dispatched)],
    ["**an active in-memory entity** (`Entities`, one `dispatch`)", bytes(entity)],
  ]
  rows += durable.rows + passive.rows
  report.add(
    Report.Table(
      title: "Entities: memory (heap bytes each, \(grouped(count)) held)",
      headers: ["what", "bytes each"], rows: rows,
      notes: [
        "Heap bytes in use (glibc's `mallinfo2()`, `uordblks + hblkhd`, every arena, after `malloc_trim(0)`) "
          + "while \(grouped(count)) of each are held, less before they were made, over \(grouped(count)): each "
          + "set made from one detached task, read, then let go (its cores shut down). An in-memory entity "
          + "is a `Core` made by the registry on its first `dispatch`, kept active until `shutdown()`, with "
          + "its entry in the registry's dictionary; the second row shows what one `dispatch` itself leaves in "
          + "a core (its mailbox's buffer, the drain's state).",
        durable.note,
        passive.note,
      ].filter { !$0.isEmpty }))
  if let idle, let entity {
    report.judge(
      "memory per active in-memory entity", requirement: "≤ an idle `Core` + 256 B", value: entity - idle, .atMost,
      256, digits: 0, unit: " B over an idle core",
      detail: "\(fixed(entity, 0)) B an entity, \(fixed(idle, 0)) B an idle core, "
        + "\(dispatched.map { fixed($0, 0) } ?? "—") B a core after one dispatch",
      why: activeMemoryWhy(entity: entity, idle: idle, dispatched: dispatched))
  } else {
    report.notMeasured(
      "memory per active in-memory entity", requirement: "≤ an idle `Core` + 256 B",
      why: "the C library has no `mallinfo2()` (glibc 2.33 or later) to count the heap with")
  }
  durable.judge(report)
  passive.judge(report)
}

/// Why an active entity can cost more than 256 B over an idle core.
private func activeMemoryWhy(entity: Double, idle: Double, dispatched: Double?) -> String {
  let byDispatch = dispatched.map { $0 - idle } ?? .nan
  return "of the \(fixed(entity - idle, 0)) B an entity holds over an idle core, \(fixed(byDispatch, 0)) B are "
    + "what one `dispatch` leaves in any core (a core after one dispatch, the second row); the rest is the "
    + "registry's entry: its dictionary slot (the id, the lifecycle with its pending and waiter arrays, the "
    + "recency tick and last use) and the handle."
}

/// Rows of the memory table from a part of the family, their note, and
/// their targets.
struct EntityMemoryRows {
  let rows: [[String]]
  let note: String
  let judge: (Report) -> Void
}
