// Random sequences of operations on a core, each checked against a plain
// sequential model of it: a struct that applies the same reducer in the
// documented order.
//
// Each sequence drives one core from one task, so the order in which the core
// reduces is fixed by what that task does: its sends and dispatches in program
// order, `.send` follow-ups breadth first right after the action that returned
// them, and what a `.run` effect sends only when the test moves the
// manual clock to that effect's deadline (deadlines are absolute and unique,
// so one effect wakes at a time, and the test waits for it to end). The core's
// state is compared with the model's wherever the core's own signals make it
// final: after `dispatch`, `await core.state`, `waitUntilIdle()` and shutdown.
// A permanent action log compares every reduced action with its states before
// and after; every-state observers are compared value for value; latest-value
// observers must read a subsequence of the states and end on the final one.
//
// A divergence prints the sequence's seed and step. Replay one sequence, with
// its operations printed, with
// `ASYNCCORE_MODEL_SEED=<seed> swift test --disable-xctest --filter ModelBasedTests`;
// run more or fewer sequences with `ASYNCCORE_MODEL_SEQUENCES=<count>` (by
// default 10,000, and 2,500 under a sanitizer).
//
// A check that depends on one of the core's documented guarantees names it
// (`Guarantee`), and a divergence lists the guarantees the sequence had
// relied on: a `.send` follow-up, for example, relies on follow-ups being
// reduced breadth first before `dispatch` returns, which is the model's order,
// so every state comparison of a sequence that had follow-ups relies on it.
//
// Before any wait that only a correct core ends (reading an observer, waiting
// for idle or for a graceful shutdown, moving the clock), the test reads the
// action log up to the model's count: a core that diverged unnoticed shows it
// there, record by record, instead of leaving the test waiting.

import AsyncCore
import AsyncCoreProcessTestSupport
import Testing

/// Random operation sequences on a core, each compared with a sequential model of it.
@Suite("Model: random operations against a sequential model", .hangDetector)
struct ModelBasedTests {
  static let firstSeed: UInt64 = 0x4153_594E_4343_4F52  // "ASYNCCOR"
  /// Sequences run at a time, each on its own core and clock.
  static let width = 8
  /// Divergences reported one by one; the rest are counted in a summary.
  static let reportedDivergences = 10
  /// 10,000 in a plain run. A quarter under a sanitizer, where each run is
  /// about 5 times slower and CI runs the suite four times (once, then three
  /// repetitions), so the sanitizer runs still cover 10,000 sequences.
  static var defaultSequences: Int { Environment.sanitizer == nil ? 10_000 : 2_500 }

  @Test("random operation sequences (10,000 by default) agree with the sequential model")
  func randomSequencesAgreeWithTheModel() async {
    let replay = Environment.string("ASYNCCORE_MODEL_SEED")
    let seeds: [UInt64]
    if let replay {
      guard let seed = UInt64(replay) else {
        Issue.record("ASYNCCORE_MODEL_SEED must be an unsigned integer, got \(replay)")
        return
      }
      seeds = [seed]
    } else {
      let count = Environment.string("ASYNCCORE_MODEL_SEQUENCES").flatMap(Int.init) ?? Self.defaultSequences
      seeds = (0..<UInt64(max(count, 1))).map { Self.firstSeed &+ $0 }
    }
    let tracing = replay != nil
    var divergences: [Divergence] = []
    var finished = 0
    await withTaskGroup(of: Divergence?.self) { group in
      var pending = seeds.makeIterator()
      for _ in 0..<Self.width {
        guard let seed = pending.next() else { break }
        group.addTask { await SequenceRun.run(seed: seed, tracing: tracing) }
      }
      while let result = await group.next() {
        finished += 1
        if let result { divergences.append(result) }
        // Cancelled (the time limit): report what ran, start no more.
        if !Task.isCancelled, let seed = pending.next() {
          group.addTask { await SequenceRun.run(seed: seed, tracing: tracing) }
        }
      }
    }
    #expect(finished == seeds.count, "only \(finished) of \(seeds.count) sequences ran")
    divergences.sort { $0.seed < $1.seed }
    for divergence in divergences.prefix(Self.reportedDivergences) {
      Issue.record(Comment(rawValue: divergence.description))
    }
    if divergences.count > Self.reportedDivergences {
      func tally(_ key: (Divergence) -> String) -> String {
        var counts: [String: Int] = [:]
        for divergence in divergences { counts[key(divergence), default: 0] += 1 }
        return counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "  \($0.value) × \($0.key)" }.joined(
          separator: "\n")
      }
      Issue.record(
        Comment(
          rawValue: "\(divergences.count) of \(seeds.count) sequences diverged from the model; "
            + "the first \(Self.reportedDivergences) are reported above. By check:\n"
            + tally(\.summary) + "\nBy the guarantees the sequence had relied on:\n"
            + tally { $0.exercised.isEmpty ? "none" : Divergence.list($0.exercised) }))
    }
  }
}
