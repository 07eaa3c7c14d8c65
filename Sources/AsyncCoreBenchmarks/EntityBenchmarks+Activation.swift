import AsyncCore
import AsyncCoreJournal
import AsyncCoreSQLite

// The entities family's activation row (see EntityBenchmarks.swift): the
// first `dispatch` to a passive entity stored as a snapshot and 10 records
// after it, against reading the same rows with SQLite and decoding them.
//
// The rows are made through the API: a registry dispatches once to each
// entity and shuts down (its passivation writes a snapshot at sequence 1),
// then a durable core per entity, on the store's journal, dispatches 10
// actions and shuts down (a core's shutdown writes no snapshot).

/// The activation row: p50 and p99 of each figure, judged on p50.
func entityActivation(plan: EntityBenchPlan, report: Report) async {
  let samples = await Task.detached { await activationSamples(plan: plan) }.value
  func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
  }
  let rows: [(String, [Double])] = [
    ("baseline: SQLite reads the snapshot and the 10 records, `JSONJournalCodec` decodes them", samples.read),
    ("**first `dispatch` to the passive entity** (activation, then the action journaled)", samples.first),
    ("the next `dispatch` to it, now active (the action journaled)", samples.second),
  ]
  let readP50 = percentile(samples.read, 0.5)
  let firstP50 = percentile(samples.first, 0.5)
  let secondP50 = percentile(samples.second, 0.5)
  report.add(
    Report.Table(
      title: "Entities: the first `dispatch` to a passive entity (a snapshot and \(plan.recordsAfterSnapshot) "
        + "records), \(grouped(plan.activations)) entities",
      headers: ["what", "p50", "p99", "p50 ratio"],
      rows: rows.map { name, values in
        [
          name, formatDuration(percentile(values, 0.5)), formatDuration(percentile(values, 0.99)),
          "\(fixed(percentile(values, 0.5) / readP50, 2))× the read",
        ]
      },
      notes: [
        "Each of \(grouped(plan.activations)) entities is stored in a new `SQLiteEntityStore` (`.operatingSystem`, "
          + "`snapshotEvery: nil`) as a snapshot and \(plan.recordsAfterSnapshot) records after it: a registry "
          + "dispatched once to each and shut down (its passivation wrote the snapshot), then a durable core per "
          + "entity on `store.journal(for:)` dispatched \(plan.recordsAfterSnapshot) actions and shut down "
          + "(a core's shutdown writes no snapshot). The store is then opened again with a registry on it "
          + "(`Passivation.never`), and for each entity in turn, from one detached task: the baseline reads its "
          + "snapshot row and its records on a connection of its own (the store's queries, prepared once, in one "
          + "read transaction) and decodes and reduces them with `JSONJournalCodec`; then one `dispatch` to it "
          + "through the registry is timed (activation: the store's read, checksums and decoding, a durable core "
          + "recovered from them; then the action encoded, committed by the writer thread and reduced), then a "
          + "second `dispatch`. The first `dispatch` less the second, \(formatDuration(firstP50 - secondP50)) at "
          + "p50, is about what the activation costs."
      ]))
  report.judge(
    "first `dispatch` to a passive entity (a snapshot and \(plan.recordsAfterSnapshot) records), p50",
    requirement: "≤ 2 × a raw SQLite read of the same rows + decode", value: firstP50 / readP50, .atMost, 2,
    detail: "\(formatDuration(firstP50)) against \(formatDuration(readP50)); p99 "
      + "\(formatDuration(percentile(samples.first, 0.99))) against \(formatDuration(percentile(samples.read, 0.99))); "
      + "a dispatch to it once active \(formatDuration(secondP50))",
    why: "the first `dispatch` does what the baseline does (the read and the decoding, with the checksums) and "
      + "then more: an unstructured `Task` for the activation, a durable `Core` made and recovered, and the "
      + "action itself journaled, a commit on the store's writer thread and the hop there and back (the next "
      + "`dispatch`, \(formatDuration(secondP50)), is that part alone).")
}

/// Seconds each: the baseline's read and decode, the first `dispatch`, the
/// second, per entity.
private func activationSamples(plan: EntityBenchPlan) async -> (read: [Double], first: [Double], second: [Double]) {
  let scratch = ScratchDirectory("entities-activation")
  defer { scratch.remove() }
  let path = scratch.path + "/entities.sqlite"
  let count = plan.activations
  let tail = plan.recordsAfterSnapshot
  // A snapshot of each entity at sequence 1.
  let first = openEntityStore(path, snapshotEvery: nil)
  let registry = entityRegistry(on: first, passivation: .never)
  _ = await dispatchOnceEach(ids: count, tasks: plan.tasks) { id in await dispatchOrFail(registry, to: id) }
  await registry.shutdown()
  // Then `tail` records after it.
  let second = openEntityStore(path, snapshotEvery: nil)
  _ = await dispatchOnceEach(ids: count, tasks: plan.tasks) { id in
    do {
      let journal = try await second.journal(for: id)
      let core = try await Core(
        initialState: entityBenchInitialState(id), journal: journal, reducer: Reduce(journalBenchReduce))
      for _ in 0..<tail { try await core.dispatch(entityBenchAction) }
      await core.shutdown()
    } catch {
      fatalError("AsyncCoreBenchmarks: could not write entity \(id)'s records: \(error)")
    }
  }
  await second.close()

  let store = openEntityStore(path, snapshotEvery: nil)
  let entities = entityRegistry(on: store, passivation: .never)
  let reader = EntityRowReader(path: path)
  let codec = JSONJournalCodec()
  let clock = ContinuousClock()
  var read: [Double] = []
  var firsts: [Double] = []
  var seconds: [Double] = []
  for id in 0..<count {
    let start = clock.now
    let rows = reader.read(id)
    var state = JournalBenchState()
    do {
      if let snapshot = rows.snapshot { state = try codec.decode(JournalBenchState.self, from: snapshot) }
      for record in rows.records { journalBenchReduce(&state, try codec.decode(JournalBenchAction.self, from: record)) }
    } catch {
      fatalError("AsyncCoreBenchmarks: JSONJournalCodec could not decode entity \(id)'s rows: \(error)")
    }
    read.append((clock.now - start).seconds)
    if rows.snapshot == nil || rows.records.count != tail || state.count != tail + 1 {
      fatalError("AsyncCoreBenchmarks: entity \(id) is stored as \(rows.records.count) records, count \(state.count)")
    }
    let dispatched = clock.now
    await dispatchOrFail(entities, to: id)
    let again = clock.now
    await dispatchOrFail(entities, to: id)
    firsts.append((again - dispatched).seconds)
    seconds.append((clock.now - again).seconds)
  }
  reader.close()
  let last = try? await entities.state(of: count - 1)
  await entities.shutdown()
  if last?.count != tail + 3 {
    fatalError("AsyncCoreBenchmarks: an activated entity holds \(last?.count ?? -1) actions, not \(tail + 3)")
  }
  return (read, firsts, seconds)
}
