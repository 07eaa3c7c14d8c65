import AsyncCore
import AsyncCoreJournal
import Synchronization

// The "journal" family: what durability costs a `JournaledCore`, against
// what this machine's disk and the codec cost on their own, in one run.
//
// Part 1 (this file): the raw baselines (the same framed records written
// with `write` + `fdatasync` per record, and as one sequential write with
// one `fdatasync`), the codec's cost per action, group commit under
// `.everyAction` (16 producers against 1) and `.interval` throughput with
// `send`.
// Part 2 (JournalRecoveryBenchmarks.swift): opening a journal of 1M records
// against decoding and reducing the same records in a plain loop.
//
// Every row writes into a scratch directory of its own under the temporary
// directory, removed when the row ends (JournalBenchmarks+Files.swift, with
// the raw baselines). The workload: JournalBenchmarks+Workload.swift.

/// The "journal" family: durability, the codec, group commit, recovery,
/// and the baselines of a durable core (JournalBaselineBenchmarks.swift).
func journalCost(options: Options, report: Report) async {
  let plan = JournalBenchPlan(quick: options.quick)
  if options.includes(JournalPart.journaledCore) {
    await journalThroughput(plan: plan, report: report)
    await journalRecovery(plan: plan, report: report)
  }
  await journalBaselines(plan: plan, report: report)
}

/// The filter titles of the family's parts: `--filter journal` runs both,
/// `--filter baselines` only the durable core's baselines.
enum JournalPart {
  static let journaledCore = "journal"
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

// MARK: - Part 1: raw baselines, codec, group commit, interval

private func journalThroughput(plan: JournalBenchPlan, report: Report) async {
  let actions = journalBenchActions(plan.records)
  let expected = journalBenchReference(actions)
  let json = JSONJournalCodec()
  let jsonBodies = encodeAll(actions, with: json)
  let jsonFrames = journalFrames(jsonBodies)
  let binaryFrames = journalFrames(encodeAll(actions, with: BinaryJournalBenchCodec()))
  let frameBytes = Double(jsonFrames.reduce(0) { $0 + $1.count }) / Double(jsonFrames.count)
  let binaryFrameBytes = Double(binaryFrames.reduce(0) { $0 + $1.count }) / Double(binaryFrames.count)
  // Actions per fdatasync of each group-commit contender, per round.
  let groupSizes = Mutex<[Int: [Double]]>([:])

  let syncing: [Contender] = [
    .baseline(JournalRow.rawPerRecord) { rawPerRecordSync(jsonFrames, for: plan.timed) },
    .core(JournalRow.everyAction(producers: 1)) {
      let (sample, perSync) = await everyActionThroughput(producers: 1, for: plan.timed)
      groupSizes.withLock { $0[1, default: []].append(perSync) }
      return sample
    },
    .core(JournalRow.everyAction(producers: plan.producers)) {
      let (sample, perSync) = await everyActionThroughput(producers: plan.producers, for: plan.timed)
      groupSizes.withLock { $0[plan.producers, default: []].append(perSync) }
      return sample
    },
  ]
  let streaming: [Contender] = [
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
  let results =
    await runInterleaved(syncing, rounds: plan.syncRounds) + runInterleaved(streaming, rounds: plan.rounds)
  report.record("journal", results)
  func rate(_ name: String) -> Double { results.first { $0.name == name }?.median ?? .nan }
  func perSync(_ producers: Int) -> Double {
    let sizes = groupSizes.withLock { $0[producers] ?? [] }.sorted()
    return sizes.isEmpty ? .nan : sizes[sizes.count / 2]
  }

  let syncsPerSecond = rate(JournalRow.rawPerRecord)
  let sequential = rate(JournalRow.rawSequential)
  report.add(
    Report.Table(
      title: "Journal: the disk and the codec on their own (baselines)",
      headers: ["baseline", "median", "min – max", "per record", "MB/s"],
      rows: results.filter(\.isBaseline).map { result in
        let bytes =
          switch result.name {
          case JournalRow.rawPerRecord, JournalRow.rawSequential: frameBytes
          case JournalRow.rawSequentialBinary: binaryFrameBytes
          default: Double.nan
          }
        return [
          result.name, formatRate(result.median), "\(formatRate(result.min)) – \(formatRate(result.max))",
          formatDuration(1 / result.median),
          bytes.isNaN ? "—" : fixed(result.median * bytes / 1e6, 1),
        ]
      },
      notes: [
        "This machine's disk, in this run: \(fixed(syncsPerSecond, 0)) `write` + `fdatasync` of one record per "
          + "second (\(formatDuration(1 / syncsPerSecond)) each), and \(fixed(sequential * frameBytes / 1e6, 0)) "
          + "MB/s written sequentially with one `fdatasync` at the end. The records are the journal's own frames "
          + "(length, CRC-32C, sequence, time, body) of \(grouped(actions.count)) deposits: \(fixed(frameBytes, 1)) bytes "
          + "each with `JSONJournalCodec`, \(fixed(binaryFrameBytes, 0)) with the benchmark's binary codec (two "
          + "`Int64`s). The per-record row runs for \(formatDuration(plan.timed.seconds)) into a new file, in "
          + "\(plan.syncRounds) rounds interleaved with the `.everyAction` rows; the "
          + "sequential rows time one `write` of all the frames (encoded and framed beforehand) and one "
          + "`fdatasync`. The codec rows encode each action with `JSONJournalCodec.encode` (and decode each body), "
          + "one call per action as the journal makes them, with no file: what the codec costs apart from the disk."
      ]))

  let one = rate(JournalRow.everyAction(producers: 1))
  let many = rate(JournalRow.everyAction(producers: plan.producers))
  // Judged on the ratio within each round (the two rows run back to back),
  // the median over rounds: the disk's latency moves tenfold between
  // seconds here, and a ratio of medians taken at different moments
  // measures that more than group commit.
  let groupCommit = medianRatio(
    results.first { $0.name == JournalRow.everyAction(producers: plan.producers) },
    over: results.first { $0.name == JournalRow.everyAction(producers: 1) })
  let interval = rate(JournalRow.interval)
  let intervalBinary = rate(JournalRow.intervalBinary)
  let encodeRate = rate(JournalRow.encode)
  report.add(
    Report.Table(
      title: "Journal: a JournaledCore's throughput (actions per second)",
      headers: ["durability, producers", "median", "min – max", "actions per fdatasync", "ratio"],
      rows: results.filter { !$0.isBaseline }.map { result in
        let group: String =
          switch result.name {
          case JournalRow.everyAction(producers: 1): fixed(perSync(1), 1)
          case JournalRow.everyAction(producers: plan.producers): fixed(perSync(plan.producers), 1)
          default: "—"
          }
        let ratio: String =
          switch result.name {
          case JournalRow.everyAction(producers: plan.producers):
            "\(fixed(many / one, 1))× 1 producer (medians); \(fixed(groupCommit, 1))× (rounds' median)"
          case JournalRow.everyAction(producers: 1): "\(fixed(one / syncsPerSecond, 2))× raw per-record sync"
          case JournalRow.interval: "\(fixed(interval / sequential, 3))× raw sequential"
          case JournalRow.intervalBinary:
            "\(fixed(intervalBinary / rate(JournalRow.rawSequentialBinary), 3))× raw sequential (binary)"
          case JournalRow.noJournal: "\(fixed(rate(JournalRow.noJournal) / sequential, 3))× raw sequential"
          default: ""
          }
        return [
          "**\(result.name)**", formatRate(result.median),
          "\(formatRate(result.min)) – \(formatRate(result.max))", group, ratio,
        ]
      },
      notes: [
        "The `.everyAction` rows open a new journal (no snapshots) and let each producer loop `try await "
          + "core.dispatch(.deposit(…))` for \(formatDuration(plan.timed.seconds)) (\(plan.syncRounds) rounds, interleaved "
          + "with the raw per-record row): every dispatch returns once "
          + "its action is appended, `fdatasync`ed and reduced. Concurrent dispatchers share one append and "
          + "one `fdatasync` (group commit); *actions per fdatasync* is `metrics.actionsReduced` over "
          + "`metrics.drainSlices` (one drain turn is one append). The `.interval(10 ms)` rows open a new "
          + "journal, `send` the \(grouped(actions.count)) deposits from one task and time until `try await "
          + "core.sync()` returns (every action journaled, reduced and `fdatasync`ed), as the raw sequential "
          + "baseline writes the same records and syncs once; the binary row uses the benchmark's binary codec "
          + "instead of `JSONJournalCodec`, to show the journal's own cost apart from JSON's; the last row sends "
          + "the same actions to a `Core` with no journal and times until `await core.state` returns."
      ]))

  report.judge(
    "journal, `.everyAction`, \(plan.producers) producers looping `dispatch`",
    requirement: "≥ 10 × 1 producer (group commit)", value: groupCommit, .atLeast, 10, digits: 1,
    detail: "median of the rounds' ratios; medians \(formatRate(many)) against \(formatRate(one)); "
      + "\(fixed(perSync(plan.producers), 1)) actions per fdatasync against \(fixed(perSync(1), 1))",
    why: groupCommitWhy(perSync: perSync(plan.producers), producers: plan.producers))
  report.judge(
    "journal, `.interval(10 ms)`, `send` from one task", requirement: "≥ 0.5 × raw sequential write (records/s)",
    value: interval / sequential, .atLeast, 0.5, digits: 3,
    detail: "\(formatRate(interval)) against \(formatRate(sequential)); JSON encoding alone "
      + "\(formatRate(encodeRate)); with a binary codec \(formatRate(intervalBinary))",
    why: intervalWhy(
      interval: interval, sequential: sequential, encode: encodeRate, binary: intervalBinary,
      unjournaled: rate(JournalRow.noJournal)))
}

/// The median over rounds of `numerator`'s figure over `denominator`'s in
/// the same round.
private func medianRatio(_ numerator: ThroughputResult?, over denominator: ThroughputResult?) -> Double {
  guard let numerator, let denominator, !numerator.perSecond.isEmpty else { return .nan }
  let ratios = zip(numerator.perSecond, denominator.perSecond).map { $0 / $1 }.sorted()
  return ratios[ratios.count / 2]
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

  static func everyAction(producers: Int) -> String {
    "`.everyAction`, \(producers) producer\(producers == 1 ? "" : "s") looping `dispatch`"
  }
}

/// Why group commit can fall short, from the group size measured.
private func groupCommitWhy(perSync: Double, producers: Int) -> String {
  if perSync < Double(producers) - 1 {
    return "each `fdatasync` carried \(fixed(perSync, 1)) actions on average where \(producers) producers wait: "
      + "the journaled drain starts its next append as soon as the previous one is reduced, before the "
      + "producers it has just resumed have queued again, so the producers settle into two groups that "
      + "alternate, each waiting for the other's sync."
  }
  return "each `fdatasync` carried \(fixed(perSync, 1)) of the \(producers) producers' actions, so what is left "
    + "is the work between two syncs, which grows with the group: \(producers) actions encoded one after "
    + "another on the writer's queue (several microseconds each with JSON), \(producers) dispatchers resumed "
    + "and queued again. It weighs when an `fdatasync` takes a fraction of a millisecond, as it does here at "
    + "moments; with syncs of milliseconds the ratio nears \(producers)."
}

/// Why the interval row can fall short of the raw sequential write.
private func intervalWhy(
  interval: Double, sequential: Double, encode: Double, binary: Double, unjournaled: Double
) -> String {
  "the raw baseline writes records already encoded, at memory speed into the page cache; the core encodes each "
    + "action first, and `JSONJournalCodec` alone encodes \(formatRate(encode)), "
    + "\(fixed(encode / sequential, 2))× the baseline's rate, so the target is out of reach with JSON before the "
    + "journal does anything. With the benchmark's binary codec the same row reaches \(formatRate(binary)) "
    + "(\(fixed(binary / sequential, 2))× the JSON baseline, \(formatDuration(1 / binary)) an action): the baseline "
    + "copies \(formatDuration(1 / sequential)) an action's bytes, while the core queues each action, takes it in "
    + "a batch, encodes it through the `any JournalCodec` existential into an array of its own, frames it (a "
    + "CRC-32C a byte at a time), reduces it and counts it; a ratio of 0.5 would leave the core tens of "
    + "nanoseconds an action for all of that. A `Core` with no journal, the same reducer and the same `send`s, "
    + "reduces \(formatRate(unjournaled)) (\(fixed(unjournaled / sequential, 2))× the JSON baseline): the core's "
    + "own queue and reduction, before any journal."
}

// MARK: - The measurements

/// `producers` tasks loop `try await core.dispatch` under `.everyAction`
/// for `duration`; returns the dispatches and the actions per `fdatasync`.
private func everyActionThroughput(producers: Int, for duration: Duration) async -> (Sample, Double) {
  let scratch = ScratchDirectory("every-action")
  defer { scratch.remove() }
  let core = await openJournalBenchCore(scratch.path + "/journal", durability: .everyAction)
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
