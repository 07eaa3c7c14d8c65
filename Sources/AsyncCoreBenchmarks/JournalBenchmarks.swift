import AsyncCore
import AsyncCoreJournal
import Synchronization

// The "journal" family: what durability costs a durable `Core` (on a
// `FileJournal`), against what this machine's disk, SQLite and the codec
// cost on their own, in one run.
//
// Part 1 (this file): the baselines (the same framed records written with
// `write` + `fdatasync` per record and as one sequential write with one
// `fdatasync`, SQLite's commits, the codec's cost per action and the
// binary-codec loop of JournalBaselineBenchmarks.swift), in the same rounds
// as `.everyAction` (1 and 16 producers) and `.interval` with `send`; the
// targets: JournalBenchmarks+Targets.swift.
// Part 2 (JournalRecoveryBenchmarks.swift): opening a durable core on a
// journal of 1M records against decoding and reducing the same records in
// a plain loop; its memory, in a child process
// (JournalBaselineBenchmarks+RecoveryMemory.swift).
//
// Every row writes into a scratch directory of its own under the temporary
// directory, removed when the row ends (JournalBenchmarks+Files.swift, with
// the raw baselines). The workload: JournalBenchmarks+Workload.swift.

/// The "journal" family: durability, the codec, group commit, recovery,
/// and the baselines of a durable core (JournalBaselineBenchmarks.swift).
func journalCost(options: Options, report: Report) async {
  let plan = JournalBenchPlan(quick: options.quick)
  let durableCore = options.includes(JournalPart.durableCore)
  await journalThroughput(plan: plan, report: report, durableCore: durableCore)
  guard durableCore else { return }
  await journalRecovery(plan: plan, report: report)
  await recoveryMemory(plan: plan, report: report)
}

/// The filter titles of the family's parts: `--filter journal` runs all of
/// it, `--filter baselines` only the baselines.
enum JournalPart {
  static let durableCore = "journal"
  static let baselines = "journal baselines"
}
/// How much each row does: a full run stays near 30 s, `--quick` near 5 s.
struct JournalBenchPlan: Sendable {
  let quick: Bool
  /// Interleaved rounds per figure (fewer than other families: each round
  /// writes to the disk).
  var rounds: Int { quick ? 1 : 3 }
  /// How long the rows that sync per record or per group run, each round.
  var timed: Duration { quick ? .milliseconds(100) : .milliseconds(400) }
  /// Rounds of those rows: more and shorter than the others', because an
  /// `fdatasync` on this shared disk takes from 0.2 to 4 ms from one second
  /// to the next, and their ratio must compare the same moments.
  var syncRounds: Int { quick ? 2 : 5 }
  /// Records of the sequential, codec and interval rows.
  var records: Int { quick ? 20_000 : 100_000 }
  /// Records of the journal recovery opens.
  var recoveryRecords: Int { quick ? 100_000 : 1_000_000 }
  /// Rounds of the recovery rows: one, each a few seconds of JSON decoding
  /// (the target's margin is wide; the figure moves about 10% run to run).
  let recoveryRounds = 1
  /// Producers of the group-commit row.
  let producers = 16
}

// MARK: - Part 1: baselines, codec, group commit, interval

private func journalThroughput(plan: JournalBenchPlan, report: Report, durableCore: Bool) async {
  let actions = journalBenchActions(plan.records)
  let expected = journalBenchReference(actions)
  let json = JSONJournalCodec()
  let jsonBodies = encodeAll(actions, with: json)
  let jsonFrames = journalFrames(jsonBodies)
  let binaryFrames = journalFrames(encodeAll(actions, with: BinaryJournalBenchCodec()))
  let frameBytes = Double(jsonFrames.reduce(0) { $0 + $1.count }) / Double(jsonFrames.count)
  let binaryFrameBytes = Double(binaryFrames.reduce(0) { $0 + $1.count }) / Double(binaryFrames.count)
  let sqliteMissing = sqliteUnavailableReason()
  if let sqliteMissing { print("SQLite rows skipped: \(sqliteMissing)") }
  let baselines = journalBaselineContenders(
    actions: actions, frames: jsonFrames, plan: plan, sqliteMissing: sqliteMissing)
  // Actions per fdatasync of each group-commit contender, per round.
  let groupSizes = Mutex<[Int: [Double]]>([:])

  var syncing: [Contender] = [.baseline(JournalRow.rawPerRecord) { rawPerRecordSync(jsonFrames, for: plan.timed) }]
  syncing += baselines.syncing
  var streaming: [Contender] = [
    .baseline(JournalRow.rawSequential) { rawSequentialWrite(jsonFrames) },
    .baseline(JournalRow.rawSequentialBinary) { rawSequentialWrite(binaryFrames) },
    .baseline(JournalRow.encode) {
      await measure(operations: actions.count) {
        do {
          for action in actions { blackHole(try json.encode(action)) }
        } catch {
          fatalError("AsyncCoreBenchmarks: JSONJournalCodec refused an action: \(error)")
        }
      }
    },
    .baseline(JournalRow.decode) {
      await measure(operations: jsonBodies.count) {
        do {
          for body in jsonBodies { blackHole(try json.decode(JournalBenchAction.self, from: body)) }
        } catch {
          fatalError("AsyncCoreBenchmarks: JSONJournalCodec could not decode its own bytes: \(error)")
        }
      }
    },
  ]
  streaming += baselines.streaming
  if durableCore {
    for producers in [1, plan.producers] {
      syncing.append(
        .core(JournalRow.everyAction(producers: producers)) {
          let (sample, perSync) = await dispatchThroughput(producers: producers, for: plan.timed)
          groupSizes.withLock { $0[producers, default: []].append(perSync) }
          return sample
        })
    }
    // The same loop with no `fdatasync`: what the core's hand-offs cost.
    syncing.append(
      .core(JournalRow.noSync) {
        await dispatchThroughput(producers: 1, durability: .operatingSystem, for: plan.timed).0
      })
    streaming += [
      .core(JournalRow.interval) {
        await intervalThroughput(actions, expected: expected, codec: json)
      },
      .core(JournalRow.intervalBinary) {
        await intervalThroughput(actions, expected: expected, codec: BinaryJournalBenchCodec())
      },
      .core(JournalRow.noJournal) {
        await unjournaledThroughput(actions, expected: expected)
      },
    ]
  }
  let results =
    await runInterleaved(syncing, rounds: plan.syncRounds) + runInterleaved(streaming, rounds: plan.rounds)
  report.record("journal", results)
  func rate(_ name: String) -> Double { results.first { $0.name == name }?.median ?? .nan }

  let syncsPerSecond = rate(JournalRow.rawPerRecord)
  let sequential = rate(JournalRow.rawSequential)
  report.add(
    Report.Table(
      title: "Journal: baselines for a durable core (the disk, SQLite and the codec, this run)",
      headers: ["baseline", "median", "min – max", "per record", "MB/s", "why it is the baseline"],
      rows: results.filter(\.isBaseline).map { result in
        let bytes =
          switch result.name {
          case JournalRow.rawPerRecord, JournalRow.rawSequential: frameBytes
          case JournalRow.rawSequentialBinary, JournalBaselineRow.binaryLoop: binaryFrameBytes
          default: Double.nan
          }
        return [
          result.name, formatRate(result.median), "\(formatRate(result.min)) – \(formatRate(result.max))",
          formatDuration(1 / result.median), bytes.isNaN ? "—" : fixed(result.median * bytes / 1e6, 1),
          JournalBaselineRow.why(result.name),
        ]
      },
      notes: [
        "This machine's disk, in this run: \(fixed(syncsPerSecond, 0)) `write` + `fdatasync` of one record per "
          + "second (\(formatDuration(1 / syncsPerSecond)) each), and \(fixed(sequential * frameBytes / 1e6, 0)) "
          + "MB/s written sequentially with one `fdatasync` at the end. Every row writes into a new directory "
          + "under the temporary directory, as the durable cores do. The records are the journal's own frames "
          + "(length, CRC-32C, sequence, time, body) of \(grouped(actions.count)) deposits: \(fixed(frameBytes, 1)) "
          + "bytes each with `JSONJournalCodec`, \(fixed(binaryFrameBytes, 0)) with the benchmark's binary codec "
          + "(two `Int64`s). The per-record and SQLite rows run for \(formatDuration(plan.timed.seconds)) each into "
          + "a new file, in \(plan.syncRounds) rounds interleaved with the `.everyAction` rows; the sequential rows "
          + "time one `write` of all the frames (encoded and framed beforehand) and one `fdatasync`. The codec "
          + "rows encode each action with `JSONJournalCodec.encode` (and decode each body), one call per action "
          + "as the journal makes them, with no file: what the codec costs apart from the disk."
      ] + journalBaselineNotes(rate: rate, actions: actions.count, plan: plan, sqliteMissing: sqliteMissing)))
  guard durableCore else { return }

  let figures = JournalFigures(
    results: results, producers: plan.producers, sqliteMissing: sqliteMissing,
    perSync: { producers in
      let sizes = groupSizes.withLock { $0[producers] ?? [] }.sorted()
      return sizes.isEmpty ? .nan : sizes[sizes.count / 2]
    })
  report.add(
    Report.Table(
      title: "Journal: a durable core's throughput (actions per second)",
      headers: ["durability, producers", "median", "min – max", "actions per fdatasync", "ratio"],
      rows: results.filter { !$0.isBaseline }.map { result in
        [
          "**\(result.name)**", formatRate(result.median), "\(formatRate(result.min)) – \(formatRate(result.max))",
          figures.groupText(result.name), figures.ratioText(result.name),
        ]
      },
      notes: [
        "The `.everyAction` rows open a new durable core (`Core(initialState:journal:reducer:)` on a "
          + "`FileJournal`, no snapshots) and let each producer loop `try await core.dispatch(.deposit(…))` for "
          + "\(formatDuration(plan.timed.seconds)) (\(plan.syncRounds) rounds, interleaved with the raw per-record "
          + "and SQLite rows): every dispatch returns once its action is reduced, appended and `fdatasync`ed. "
          + "Concurrent dispatchers share one append and one `fdatasync` (group commit); *actions per fdatasync* "
          + "is `metrics.actionsReduced` over `metrics.drainSlices` (one drain turn is one append). The "
          + "`.operatingSystem` row runs the same loop on a journal that never syncs: what the core and the "
          + "journal's queue cost around the disk. The "
          + "`.interval(10 ms)` rows open a new durable core, `send` the \(grouped(actions.count)) deposits from one "
          + "task and time until `try await core.sync()` returns (every action reduced, journaled and "
          + "`fdatasync`ed), as the raw sequential baseline writes the same records and syncs once; the binary row "
          + "uses the benchmark's binary codec instead of `JSONJournalCodec`, and is judged against the "
          + "binary-codec loop; the last row sends the same actions to a `Core` with no journal and times until "
          + "`await core.state` returns. Ratios in rounds are the median over rounds of the two rows' ratio in "
          + "the same round: the disk's latency moves tenfold between seconds here."
      ]))
  judgeJournalThroughput(figures, report: report)
}

/// The names of the family's rows, shared by the contenders and the tables.
enum JournalRow {
  static let rawPerRecord = "raw: `write` + `fdatasync` per record"
  static let rawSequential = "raw: one sequential `write` + one `fdatasync` (JSON records)"
  static let rawSequentialBinary = "raw: one sequential `write` + one `fdatasync` (binary records)"
  static let encode = "`JSONJournalCodec` encode, per action"
  static let decode = "`JSONJournalCodec` decode, per action"
  static let interval = "`.interval(10 ms)`, `send` from 1 task, JSON"
  static let intervalBinary = "`.interval(10 ms)`, `send` from 1 task, binary codec"
  static let noJournal = "no journal: a `Core`, `send` from 1 task (the core's own ceiling)"
  static let noSync = "`.operatingSystem` (no `fdatasync`), 1 producer looping `dispatch`"

  static func everyAction(producers: Int) -> String {
    "`.everyAction`, \(producers) producer\(producers == 1 ? "" : "s") looping `dispatch`"
  }
}

// MARK: - The measurements

/// `producers` tasks loop `try await core.dispatch` under `durability`
/// for `duration`; returns the dispatches and the actions per append.
private func dispatchThroughput(
  producers: Int, durability: JournalDurability = .everyAction, for duration: Duration
) async -> (Sample, Double) {
  let scratch = ScratchDirectory("every-action")
  defer { scratch.remove() }
  let core = await openJournalBenchCore(scratch.path + "/journal", durability: durability)
  let clock = ContinuousClock()
  let start = clock.now
  let deadline = start + duration
  let total = await withTaskGroup(of: Int.self) { group in
    for producer in 0..<producers {
      group.addTask {
        var done = 0
        repeat {
          do {
            try await core.dispatch(.deposit(account: producer, amount: done % 97 + 1))
          } catch {
            fatalError("AsyncCoreBenchmarks: a journaled dispatch failed: \(error)")
          }
          done += 1
        } while clock.now < deadline
        return done
      }
    }
    return await group.reduce(0, +)
  }
  let sample = Sample(operations: total, duration: clock.now - start)
  let metrics = core.metrics
  await core.shutdown()
  if metrics.actionsReduced != total {
    fatalError("AsyncCoreBenchmarks: \(total) journaled dispatches returned, \(metrics.actionsReduced) reduced")
  }
  return (sample, Double(metrics.actionsReduced) / Double(max(metrics.drainSlices, 1)))
}

/// Sends `actions` from one task to a `Core` with no journal and times
/// until `state` returns them reduced: the ceiling of the interval rows.
private func unjournaledThroughput(_ actions: [JournalBenchAction], expected: JournalBenchState) async -> Sample {
  let core = Core(initialState: JournalBenchState(), reducer: Reduce(journalBenchReduce))
  var state = JournalBenchState()
  let sample = await measure(operations: actions.count) {
    for action in actions { core.send(action) }
    state = await core.state
  }
  await core.shutdown()
  if state != expected {
    fatalError("AsyncCoreBenchmarks: \(actions.count) actions sent to a core, \(state.count) reduced")
  }
  return sample
}

/// Sends `actions` from one task to a core under `.interval(10 ms)` and
/// times until `sync()` returns.
private func intervalThroughput(
  _ actions: [JournalBenchAction], expected: JournalBenchState, codec: some JournalCodec
) async -> Sample {
  let scratch = ScratchDirectory("interval")
  defer { scratch.remove() }
  let core = await openJournalBenchCore(
    scratch.path + "/journal", durability: .interval(.milliseconds(10)), codec: codec)
  let sample = await measure(operations: actions.count) {
    for action in actions { core.send(action) }
    do {
      try await core.sync()
    } catch {
      fatalError("AsyncCoreBenchmarks: a journal sync failed: \(error)")
    }
  }
  let state = await core.state
  await core.shutdown()
  if state != expected {
    fatalError("AsyncCoreBenchmarks: \(actions.count) actions sent to a journaled core, \(state.count) reduced")
  }
  return sample
}
