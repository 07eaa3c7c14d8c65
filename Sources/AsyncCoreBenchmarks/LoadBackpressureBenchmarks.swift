import AsyncCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The "under load" family's part 3 (see LoadBenchmarks.swift): backpressure.
// 8 producers each `try await core.enqueue(.increment)` a fixed number of
// times into a core whose mailbox holds at most C actions (C = 4,096, and
// C = 64 for comparison), or into an unbounded one, where `enqueue` never
// waits; all three in the same interleaved rounds. Each flood also reads the
// process's peak resident memory, the way the awaiting-caller floods do
// (VmHWM after resetting it).
//
// A peak resident reading counts only pages the flood touches for the first
// time: a buffer malloc carves out of pages an earlier flood freed, and that
// stayed resident, does not show. glibc keeps freed memory resident in two
// places: in its free lists (`malloc_trim(0)` gives those pages back), and
// at the top of each thread's arena, which `malloc_trim(0)` leaves in place
// here (it returned 1 and the growth stayed hidden) and which glibc shrinks
// only past a trim threshold that rises, as its mmap threshold does, up to
// 64 MiB once large blocks have been freed. So before
// these floods, the benchmark fixes the mmap threshold at 64 KiB and the
// trim threshold at 128 KiB (`mallopt`): every buffer of 64 KiB or more is
// mapped fresh and unmapped when freed, and each flood starts after
// `malloc_trim(0)`. Measured before this: an unbounded flood holding
// 800,000 queued actions (6.4 MB) read a growth of 0.1 to 4 MiB. This is the
// family's last part, and the family runs last: no other figure runs with
// these settings.

/// Backpressure under an 8-producer `enqueue` flood: throughput against the
/// unbounded mailbox, and peak resident growth against the bound.
func enqueueUnderFlood(options: Options, report: Report) async {
  let producers = 8
  let perProducer = options.quick ? 100_000 : 1_000_000
  // Capacity 64 is the slowest and is not judged: a quarter as many in a
  // quick run, which still exercises its 8 waiters at every fill.
  let quickCapacity64 = perProducer / 4
  func count(_ mailbox: LoadMailbox) -> Int {
    mailbox == .capacity64 && options.quick ? quickCapacity64 : perProducer
  }
  let log = FloodMemoryLog()
  setMallocThresholdsForPeakReadings()
  let contenders = LoadMailbox.allCases.map { mailbox in
    let actions = count(mailbox)
    return Contender.core("`enqueue`, \(producers) producers, \(mailbox.name)") {
      await mailbox.floodEnqueue(producers: producers, perProducer: actions, log: log)
    }
  }
  let results = await runInterleaved(contenders, rounds: options.rounds)
  report.record("load", results)
  let memory = log.entries.withLock { $0 }
  let rows = zip(LoadMailbox.allCases, results).map { mailbox, result in
    let floods = memory[mailbox, default: []]
    let growths = floods.compactMap(\.peakGrowth)
    return [
      result.name, formatRate(result.median), "\(formatRate(result.min)) – \(formatRate(result.max))",
      grouped(floods.map(\.highWaterMark).max() ?? 0),
      growths.max().map(formatBytes) ?? "n/a",
    ]
  }
  report.add(
    Report.Table(
      title: "Under load: backpressure, \(producers) producers flooding `enqueue` (actions per second)",
      headers: ["mailbox", "median", "min – max", "queue high-water mark", "peak RSS growth (largest)"],
      rows: rows,
      notes: [
        "Each producer calls `try await core.enqueue(.increment)` \(grouped(perProducer)) times back to back"
          + (options.quick ? " (\(grouped(count(.capacity64))) into capacity 64)" : "")
          + "; the figure is the time until the state holds the last one. "
          + "Into a bounded mailbox, `enqueue` waits while the mailbox is full and the core admits the waiting "
          + "senders, oldest first, as it reduces; into the unbounded one it never waits, as `send`. "
          + "*Queue high-water mark* is `core.metrics.queueHighWaterMark` after the flood, the largest over "
          + "the rounds. *Peak RSS growth* is the process's VmHWM at the end of the flood (reset through "
          + "/proc/self/clear_refs before it) less VmRSS before it, the largest over the rounds. So that a "
          + "flood cannot hide its growth in pages an earlier one freed and left resident, these floods run "
          + "with glibc's mmap threshold fixed at 64 KiB and its trim threshold at 128 KiB (`mallopt`: larger "
          + "buffers are mapped fresh and unmapped when freed), each after `malloc_trim(0)`; the kernel's "
          + "count is approximate, to a few hundred kilobytes.",
        "The bound the bounded mailbox must stay within is C × the size of a queued entry × 2 + 1 MiB. "
          + "A queued entry is an `Envelope<BenchAction>`, internal to AsyncCore: the action "
          + "(`MemoryLayout<BenchAction>.stride`, \(MemoryLayout<BenchAction>.stride) B) and the optional "
          + "pointer to its sender's lineage (8 B). Times 2: the mailbox's array and the buffer the drain "
          + "reduces a batch from (swapped with it at each take, and kept for its capacity) can each hold up "
          + "to C at once. The megabyte covers everything else the flood touches (the senders' tasks and "
          + "continuations, the waiters' list, the kernel's approximate count).",
      ]))

  // Throughput: the bounded mailbox against the unbounded, same rounds.
  func result(_ mailbox: LoadMailbox) -> ThroughputResult? {
    results.first { $0.name.hasSuffix(mailbox.name) }
  }
  let bounded = result(.capacity4096)?.median ?? .nan
  let unbounded = result(.unbounded)?.median ?? .nan
  report.judge(
    "`enqueue` throughput, 8 producers, mailbox capacity 4,096",
    requirement: "≥ 0.8 × the same producers into an unbounded mailbox, same rounds",
    value: bounded / unbounded, .atLeast, 0.8,
    detail: "\(formatRate(bounded)) against \(formatRate(unbounded)); capacity 64: "
      + (result(.capacity64).map { formatRate($0.median) } ?? "n/a"),
    why: boundedThroughputWhy)

  // Memory: the largest growth over the rounds against the bound.
  let bound = LoadMailbox.capacity4096.memoryBound
  let boundedGrowth = memory[.capacity4096, default: []].compactMap(\.peakGrowth).max()
  let unboundedGrowth = memory[.unbounded, default: []].compactMap(\.peakGrowth).max()
  if let boundedGrowth {
    report.judge(
      "Peak RSS growth, 8 producers flooding `enqueue`, mailbox capacity 4,096",
      requirement: "≤ C × entry × 2 + 1 MiB = \(formatBytes(bound)) (C = 4,096, entry = "
        + "\(LoadMailbox.entrySize) B)",
      value: Double(boundedGrowth) / 1_024, .atMost, Double(bound) / 1_024, digits: 0, unit: " KiB",
      detail: "bound \(grouped(bound / 1_024)) KiB; the unbounded mailbox's flood: "
        + (unboundedGrowth.map(formatBytes) ?? "n/a"),
      why: boundedMemoryWhy)
  } else {
    report.notMeasured(
      "Peak RSS growth, 8 producers flooding `enqueue`, mailbox capacity 4,096",
      requirement: "≤ C × entry × 2 + 1 MiB",
      why: "the process's peak resident memory cannot be reset here (not Linux)"
    )
  }
}

/// Why the bounded mailbox's throughput can fall short of the unbounded
/// one's, from what was measured.
private let boundedThroughputWhy =
  "into a bounded mailbox the producers suspend whenever it is full, and the core resumes them as it makes "
  + "room: a task wake-up for each waiting producer at each fill, where the unbounded mailbox never suspends "
  + "anyone (capacity 64, with a fill every 64 actions, shows that cost growing). With room, `enqueue` costs what "
  + "`send` does (callgrind: about 610 instructions an action each), so the ratio moves with this machine's "
  + "noise."

/// Why the bounded flood's growth can exceed the bound.
private let boundedMemoryWhy =
  "the growth read covers the whole process: besides the mailbox's two buffers, the 8 senders' tasks and "
  + "continuations and anything else that ran, and the kernel's resident count is approximate to a few hundred "
  + "kilobytes."

/// The mailboxes the backpressure table compares in the same rounds.
enum LoadMailbox: Hashable, CaseIterable, Sendable {
  case unbounded
  case capacity4096
  case capacity64

  var capacity: Int? {
    switch self {
    case .unbounded: nil
    case .capacity4096: 4_096
    case .capacity64: 64
    }
  }

  var name: String {
    capacity.map { "capacity \(grouped($0))" } ?? "unbounded"
  }

  /// The size of one queued entry, an `Envelope<BenchAction>` (internal to
  /// AsyncCore): the action and the optional pointer to its lineage.
  static var entrySize: Int { MemoryLayout<BenchAction>.stride + 8 }

  /// C × entry × 2 (the mailbox's array and the drain's batch buffer) +
  /// 1 MiB; for a bounded mailbox only.
  var memoryBound: Int {
    (capacity ?? 0) * Self.entrySize * 2 + 1_048_576
  }

  /// `producers` tasks each enqueue `perProducer` actions; the time until
  /// the state holds the last one. Logs the flood's queue high-water mark
  /// and peak resident growth.
  func floodEnqueue(producers: Int, perProducer: Int, log: FloodMemoryLog) async -> Sample {
    var core: Core<BenchState, BenchAction>? = Core(
      initialState: BenchState(), mailboxCapacity: capacity, reducer: Reduce(benchReduce))
    weak let released = core
    trimHeap()
    let peakWasReset = resetPeakResident()
    let before = statusBytes("VmRSS")
    let (sample, metrics) = await Self.flood(core!, producers: producers, perProducer: perProducer)
    // After the state read: the peak covers the flood and the reduction of
    // what it left queued.
    let peak = peakWasReset ? statusBytes("VmHWM") : nil
    if let capacity, metrics.queueHighWaterMark > capacity {
      fatalError("AsyncCoreBenchmarks: a mailbox of capacity \(capacity) held \(metrics.queueHighWaterMark) actions")
    }
    // Every producer has returned: a figure saying otherwise is stale.
    if metrics.waitingSenders != 0 {
      print("warning: after an `enqueue` flood, core.metrics.waitingSenders reads \(metrics.waitingSenders)")
    }
    await core?.shutdown()
    // Its drain task lets go of the core shortly after the last action:
    // wait for that, so the buffers are freed before the next flood trims
    // the heap, or they would be freed during that flood, and their pages,
    // still resident, would hide its growth.
    core = nil
    let giveUp = ContinuousClock.now + .seconds(1)
    while released != nil && ContinuousClock.now < giveUp {
      try? await Task.sleep(for: .microseconds(100))
    }
    if released != nil { print("warning: a core was still held 1 s after its `enqueue` flood and shutdown") }
    log.entries.withLock {
      $0[self, default: []].append(
        FloodMemory(
          highWaterMark: metrics.queueHighWaterMark,
          peakGrowth: peak.flatMap { peak in before.map { max(0, peak - $0) } }))
    }
    return sample
  }

  private static func flood(
    _ core: Core<BenchState, BenchAction>, producers: Int, perProducer: Int
  ) async -> (Sample, CoreMetrics) {
    let total = producers * perProducer
    let sample = await measure(operations: total) {
      await withDiscardingTaskGroup { group in
        for _ in 0..<producers {
          group.addTask {
            for _ in 0..<perProducer {
              do {
                try await core.enqueue(.increment)
              } catch {
                fatalError("AsyncCoreBenchmarks: the core refused an enqueued action: \(error)")
              }
            }
          }
        }
      }
      let reduced = await core.state.count
      if reduced != total {
        fatalError("AsyncCoreBenchmarks: \(total) actions enqueued, \(reduced) reduced")
      }
    }
    return (sample, core.metrics)
  }
}

/// What one `enqueue` flood left in the queue's figures and the process's
/// memory.
struct FloodMemory: Sendable {
  /// `core.metrics.queueHighWaterMark` after the flood.
  let highWaterMark: Int
  /// Peak resident memory during the flood less resident memory before
  /// it; nil where the peak cannot be reset (not Linux).
  let peakGrowth: Int?
}

/// The floods' memory figures, by mailbox, logged from the detached tasks
/// that measure them.
final class FloodMemoryLog: Sendable {
  let entries = Mutex<[LoadMailbox: [FloodMemory]]>([:])
}

/// Fixes glibc's mmap threshold at 64 KiB and its trim threshold at
/// 128 KiB (`mallopt`, looked up at run time), so that a large buffer is
/// mapped fresh and unmapped when freed, and no freed memory stays resident
/// at the top of a thread's arena: see the top of this file.
func setMallocThresholdsForPeakReadings() {
  #if canImport(Glibc)
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    // M_TRIM_THRESHOLD and M_MMAP_THRESHOLD, from glibc's malloc.h.
    _ = mallopt(-1, 128 * 1_024)
    _ = mallopt(-3, 64 * 1_024)
  #endif
}

/// Gives the heap's free pages back to the kernel (glibc's `malloc_trim(0)`,
/// looked up at run time: the Glibc module does not export malloc.h), so
/// that the next peak resident reading counts every page a flood touches.
func trimHeap() {
  #if canImport(Glibc)
    // A null handle is RTLD_DEFAULT: the symbol wherever it is loaded.
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    typealias MallocTrim = @convention(c) (Int) -> Int32
    _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
  #endif
}
