// The journal family's throughput targets (see JournalBenchmarks.swift):
// each a ratio of a durable core's row against a baseline measured in the
// same rounds, with the reason a miss has.

/// The throughput rows of one run, and the ratios the table and the
/// targets read from them.
struct JournalFigures {
  let results: [ThroughputResult]
  let producers: Int
  let sqliteMissing: String?
  /// Actions per `fdatasync` of the `.everyAction` row with that many
  /// producers (the median over rounds).
  let perSync: (Int) -> Double

  func rate(_ name: String) -> Double { results.first { $0.name == name }?.median ?? .nan }

  /// The median over rounds of `numerator`'s figure over `denominator`'s in
  /// the same round.
  func inRounds(_ numerator: String, over denominator: String) -> Double {
    guard let top = results.first(where: { $0.name == numerator }),
      let bottom = results.first(where: { $0.name == denominator }), !top.perSecond.isEmpty
    else { return .nan }
    let ratios = zip(top.perSecond, bottom.perSecond).map { $0 / $1 }.sorted()
    return ratios[ratios.count / 2]
  }

  static let one = JournalRow.everyAction(producers: 1)
  var many: String { JournalRow.everyAction(producers: producers) }
  static let sqliteOne = JournalBaselineRow.sqlite(rowsPerTransaction: 1)
  static let sqliteSixteen = JournalBaselineRow.sqlite(rowsPerTransaction: 16)

  func groupText(_ name: String) -> String {
    switch name {
    case Self.one: fixed(perSync(1), 1)
    case many: fixed(perSync(producers), 1)
    default: "—"
    }
  }

  func ratioText(_ name: String) -> String {
    let sequential = rate(JournalRow.rawSequential)
    let sqlite = sqliteMissing == nil
    switch name {
    case Self.one:
      return "\(fixed(inRounds(Self.one, over: JournalRow.rawPerRecord), 2))× raw per-record sync"
        + (sqlite ? "; \(fixed(inRounds(Self.one, over: Self.sqliteOne), 2))× SQLite, 1 row" : "") + " (in rounds)"
    case many:
      return "\(fixed(inRounds(many, over: Self.one), 1))× 1 producer"
        + (sqlite ? "; \(fixed(inRounds(many, over: Self.sqliteSixteen), 2))× SQLite, 16 rows" : "") + " (in rounds)"
    case JournalRow.interval: return "\(fixed(rate(name) / sequential, 3))× raw sequential"
    case JournalRow.intervalBinary:
      return "\(fixed(inRounds(name, over: JournalBaselineRow.binaryLoop), 2))× the binary-codec loop (in rounds); "
        + "\(fixed(rate(name) / rate(JournalRow.rawSequentialBinary), 3))× raw sequential (binary)"
    case JournalRow.noJournal: return "\(fixed(rate(name) / sequential, 3))× raw sequential"
    case JournalRow.noSync:
      return "\(formatDuration(1 / rate(name))) a dispatch: the core's part of the `.everyAction` row"
    default: return ""
    }
  }
}

/// The family's throughput targets.
func judgeJournalThroughput(_ figures: JournalFigures, report: Report) {
  let producers = figures.producers
  let one = figures.rate(JournalFigures.one)
  let many = figures.rate(figures.many)
  let raw = figures.rate(JournalRow.rawPerRecord)
  report.judge(
    "journal, `.everyAction`, \(producers) producers looping `dispatch`",
    requirement: "≥ 10 × 1 producer (group commit)", value: figures.inRounds(figures.many, over: JournalFigures.one),
    .atLeast, 10, digits: 1,
    detail: "median of the rounds' ratios; medians \(formatRate(many)) against \(formatRate(one)); "
      + "\(fixed(figures.perSync(producers), 1)) actions per fdatasync against \(fixed(figures.perSync(1), 1))",
    why: groupCommitWhy(perSync: figures.perSync(producers), producers: producers))
  report.judge(
    "journal, `.everyAction`, 1 producer looping `dispatch`",
    requirement: "≥ 0.9 × raw `write` + `fdatasync` per record",
    value: figures.inRounds(JournalFigures.one, over: JournalRow.rawPerRecord), .atLeast, 0.9,
    detail: "median of the rounds' ratios; medians \(formatRate(one)) against \(formatRate(raw))",
    why: oneProducerWhy(one: one, raw: raw))
  if let missing = figures.sqliteMissing {
    let why = "SQLite cannot run here: \(missing)"
    report.notMeasured(
      "journal, `.everyAction`, 1 producer looping `dispatch`", requirement: "≥ 1.0 × SQLite, 1 row per commit",
      why: why)
    report.notMeasured(
      "journal, `.everyAction`, \(producers) producers looping `dispatch`",
      requirement: "≥ 1.0 × SQLite, 16 rows per transaction (rows/s)", why: why)
  } else {
    let sqliteOne = figures.rate(JournalFigures.sqliteOne)
    let sqliteSixteen = figures.rate(JournalFigures.sqliteSixteen)
    report.judge(
      "journal, `.everyAction`, 1 producer looping `dispatch`",
      requirement: "≥ 1.0 × SQLite (WAL, `synchronous=FULL`), 1 row per commit",
      value: figures.inRounds(JournalFigures.one, over: JournalFigures.sqliteOne), .atLeast, 1,
      detail: "median of the rounds' ratios; medians \(formatRate(one)) against \(formatRate(sqliteOne))",
      why: againstSQLiteOneWhy(one: one, sqlite: sqliteOne, raw: raw))
    report.judge(
      "journal, `.everyAction`, \(producers) producers looping `dispatch`",
      requirement: "≥ 1.0 × SQLite (WAL, `synchronous=FULL`), 16 rows per transaction (rows/s)",
      value: figures.inRounds(figures.many, over: JournalFigures.sqliteSixteen), .atLeast, 1,
      detail: "median of the rounds' ratios; medians \(formatRate(many)) against \(formatRate(sqliteSixteen)); "
        + "\(fixed(figures.perSync(producers), 1)) actions per fdatasync",
      why: againstSQLiteSixteenWhy(
        many: many, sqlite: sqliteSixteen, perSync: figures.perSync(producers), producers: producers))
  }
  let interval = figures.rate(JournalRow.interval)
  let sequential = figures.rate(JournalRow.rawSequential)
  let intervalBinary = figures.rate(JournalRow.intervalBinary)
  let encode = figures.rate(JournalRow.encode)
  let unjournaled = figures.rate(JournalRow.noJournal)
  report.judge(
    "journal, `.interval(10 ms)`, `send` from one task", requirement: "≥ 0.5 × raw sequential write (records/s)",
    value: interval / sequential, .atLeast, 0.5, digits: 3,
    detail: "\(formatRate(interval)) against \(formatRate(sequential)); JSON encoding alone "
      + "\(formatRate(encode)); with a binary codec \(formatRate(intervalBinary))",
    why: intervalWhy(encode: encode, sequential: sequential))
  let loop = figures.rate(JournalBaselineRow.binaryLoop)
  report.judge(
    "journal, `.interval(10 ms)`, `send` from one task, binary codec",
    requirement: "≥ 0.5 × the binary-codec loop (encode, frame, buffered writes, one `fdatasync`)",
    value: figures.inRounds(JournalRow.intervalBinary, over: JournalBaselineRow.binaryLoop), .atLeast, 0.5,
    detail: "median of the rounds' ratios; medians \(formatRate(intervalBinary)) against \(formatRate(loop)); "
      + "no journal \(formatRate(unjournaled))",
    why: intervalBinaryWhy(binary: intervalBinary, loop: loop, unjournaled: unjournaled))
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
    + "another (several microseconds each with JSON), \(producers) dispatchers resumed "
    + "and queued again. It weighs when an `fdatasync` takes a fraction of a millisecond, as it does here at "
    + "moments; with syncs of milliseconds the ratio nears \(producers)."
}

/// The durable path's cost apart from the disk, as callgrind counted it
/// (`AsyncCoreProfile durable-dispatch` and `durable-send`, a journal that
/// keeps nothing and never waits): the lever every throughput target shares.
private let durablePathCost =
  "callgrind on the core's durable path alone (`AsyncCoreProfile durable-dispatch`, a journal that keeps nothing "
  + "and never waits) counts about 43,000 instructions a `dispatch` against 780 without a journal, and "
  + "`durable-send` about 4,200 an action against 550 for `send`: the journaled drain, its turns and staging "
  + "(Core+Journal.swift) are not `@inlinable`, so they run unspecialised from another module, and about a third "
  + "of those instructions are the runtime's generic-metadata lookups (some 27 a dispatch), the rest the "
  + "turn's task switches around the journal's `append`. The next lever is specialising that path "
  + "(`@inlinable` on the drain, the slice and the turn, as the plain drain is) before anything on the disk"

/// Why one producer's `.everyAction` dispatch can fall short of a bare sync.
private func oneProducerWhy(one: Double, raw: Double) -> String {
  "a dispatch took \(formatDuration(1 / one)) against \(formatDuration(1 / raw)) for a bare `write` + `fdatasync`: "
    + "each carries one action to one `fdatasync`, as the baseline does, and on top the mailbox, the drain's turn, "
    + "the JSON encoding, the hop to `FileJournal`'s queue and back and the dispatcher's resumption (the "
    + "`.operatingSystem` row: the same loop with no sync). " + durablePathCost + "."
}

/// Why one producer's `.everyAction` dispatch can fall short of SQLite's commit.
private func againstSQLiteOneWhy(one: Double, sqlite: Double, raw: Double) -> String {
  "SQLite committed a row in \(formatDuration(1 / sqlite)) (\(fixed(sqlite / raw, 2))× the bare sync's rate), a "
    + "dispatch took \(formatDuration(1 / one)): both pay one `fdatasync`, so the gap is the core's own work "
    + "around it. " + durablePathCost + "."
}

/// Why 16 producers can fall short of SQLite's 16-row transaction.
private func againstSQLiteSixteenWhy(many: Double, sqlite: Double, perSync: Double, producers: Int) -> String {
  "\(fixed(perSync, 1)) actions shared each `fdatasync` (SQLite commits 16 rows in one), so the groups are as "
    + "large; what is left is the time between two syncs: the \(producers) dispatchers resumed and queued again "
    + "(the drain yields up to 64 turns to gather them) and each action encoded and staged on the unspecialised "
    + "durable path. " + durablePathCost + "."
}

/// Why the JSON interval row falls short of the raw sequential write.
private func intervalWhy(encode: Double, sequential: Double) -> String {
  "the raw baseline writes records already encoded, at memory speed into the page cache; the core encodes each "
    + "action first, and `JSONJournalCodec` alone encodes \(formatRate(encode)), "
    + "\(fixed(encode / sequential, 2))× the baseline's rate, so the target is out of reach with JSON before the "
    + "journal does anything; the binary-codec row's target below judges the journal apart from JSON."
}

/// Why `.interval` with the binary codec can fall short of the codec's loop.
private func intervalBinaryWhy(binary: Double, loop: Double, unjournaled: Double) -> String {
  "the loop encodes, frames and writes an action in \(formatDuration(1 / loop)), the durable core took "
    + "\(formatDuration(1 / binary)) (with no journal the same `send`s reduce in \(formatDuration(1 / unjournaled))): "
    + "the difference is the durable path per action, each action staged through `any CoreJournal` into an array "
    + "of its own, then framed by `FileJournal` on its queue. " + durablePathCost + "."
}
