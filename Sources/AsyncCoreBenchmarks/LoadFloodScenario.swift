import AsyncCore

// The "under load" family's floods (see LoadBenchmarks.swift): what the
// producers of one flood do, the prober that times the awaiting calls
// meanwhile, and what one flood measured.

/// What the prober awaits.
enum LoadProbe: String, CaseIterable, Sendable {
  case state = "await core.state"
  case dispatch = "try await core.dispatch"
}

/// What the producers of a flood do.
enum FloodWork: Hashable, Sendable {
  /// Nothing: no producers, the idle core's baseline.
  case none
  /// Loop `core.send`.
  case send
  /// Loop `try await core.enqueue` into a core made with
  /// `mailboxCapacity: capacity`: they suspend while its mailbox is full.
  case enqueue(capacity: Int)
  /// The same loop on a `Mutex` store of their own, never touching the
  /// core: what the thread pool alone costs the awaiting caller.
  case elsewhere

  /// Whether the producers send to the core.
  var touchesCore: Bool {
    switch self {
    case .send, .enqueue: true
    case .none, .elsewhere: false
    }
  }
}

/// One flood: `producers` tasks sending (none for the idle baseline) while
/// a prober times one kind of awaiting call.
struct FloodScenario: Hashable, Sendable {
  let producers: Int
  let probe: LoadProbe
  /// Whether each producer yields every 1,000 sends.
  let yields: Bool
  var work = FloodWork.send

  /// The mailbox capacity at which the `enqueue` flood is judged.
  static let judgedCapacity = 4_096

  static func idle(_ probe: LoadProbe) -> Self {
    FloodScenario(producers: 0, probe: probe, yields: false, work: .none)
  }

  var isIdle: Bool { work == .none }

  var name: String {
    let yielding = yields ? ", yielding every 1,000" : ""
    return switch work {
    case .none: "\(probe.rawValue), idle core"
    case .send: "\(probe.rawValue), \(producers)P flooding send\(yielding)"
    case .enqueue(let capacity): "\(probe.rawValue), \(producers)P flooding enqueue, capacity \(capacity)"
    case .elsewhere: "\(probe.rawValue), idle core, \(producers)P busy elsewhere\(yielding)"
    }
  }

  func run(for flood: Duration) async -> FloodResult {
    let core =
      if case .enqueue(let capacity) = work {
        Core(initialState: BenchState(), mailboxCapacity: capacity, reducer: Reduce(benchReduce))
      } else {
        makeBenchCore()
      }
    let peakWasReset = resetPeakResident()
    let before = statusBytes("VmRSS")
    let deadline = ContinuousClock.now + flood
    let probe = probe
    let prober = Task.detached { await Self.probe(core, with: probe, until: deadline) }
    let (yields, work) = (yields, work)
    let sent = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<producers {
        group.addTask {
          switch work {
          case .send: await Self.floodSend(core, until: deadline, yielding: yields)
          case .enqueue: await Self.floodEnqueue(core, until: deadline)
          case .none, .elsewhere: await Self.keepBusy(until: deadline, yielding: yields)
          }
        }
      }
      return await group.reduce(0, +)
    }
    let samples = await prober.value
    // Read before the backlog is reduced: the mailbox is at its largest.
    let peak = peakWasReset ? statusBytes("VmHWM") : nil
    let reduced = await core.state.count
    await core.shutdown()
    return FloodResult(
      samples: samples, sent: work.touchesCore ? sent : 0,
      dispatched: probe == .dispatch ? samples.latencies.count : 0, reduced: reduced,
      // The kernel counts resident pages per thread and folds them in
      // lazily: a growth under about a megabyte is noise, and can read
      // below zero.
      peakGrowth: peak.flatMap { peak in before.map { max(0, peak - $0) } })
  }

  /// Sends until `deadline`, looking at the clock every 1,000 sends; returns
  /// how many the core accepted.
  ///
  /// A producer that does not yield never suspends: it holds its thread
  /// until the deadline, as a tight loop in a service would.
  private static func floodSend(
    _ core: Core<BenchState, BenchAction>, until deadline: ContinuousClock.Instant, yielding: Bool
  ) async -> Int {
    var sent = 0
    while ContinuousClock.now < deadline {
      for _ in 0..<1_000 {
        if core.send(.increment) == .accepted { sent += 1 }
      }
      if yielding { await Task.yield() }
    }
    return sent
  }

  /// Enqueues until `deadline`, looking at the clock every 1,000 calls;
  /// returns how many it enqueued. It suspends only while the mailbox is
  /// full.
  private static func floodEnqueue(
    _ core: Core<BenchState, BenchAction>, until deadline: ContinuousClock.Instant
  ) async -> Int {
    var sent = 0
    while ContinuousClock.now < deadline {
      for _ in 0..<1_000 {
        do {
          try await core.enqueue(.increment)
          sent += 1
        } catch {
          fatalError("AsyncCoreBenchmarks: the core refused an enqueued action: \(error)")
        }
      }
    }
    return sent
  }

  /// The same loop as `floodSend` on a store of this producer's own;
  /// returns 0 (nothing was sent to the core).
  private static func keepBusy(until deadline: ContinuousClock.Instant, yielding: Bool) async -> Int {
    let store = MutexStore()
    while ContinuousClock.now < deadline {
      for _ in 0..<1_000 { store.dispatch(.increment) }
      if yielding { await Task.yield() }
    }
    return 0
  }

  /// Every millisecond until `deadline`, one awaiting call, timed, with
  /// the core's queue figures read just before and just after it.
  private static func probe(
    _ core: Core<BenchState, BenchAction>, with probe: LoadProbe, until deadline: ContinuousClock.Instant
  ) async -> ProbeSamples {
    var samples = ProbeSamples()
    while ContinuousClock.now < deadline {
      let due = ContinuousClock.now + .milliseconds(1)
      try? await Task.sleep(until: due)
      let before = core.metrics
      let start = ContinuousClock.now
      switch probe {
      case .state: blackHole(await core.state)
      case .dispatch: await dispatch(.increment, to: core)
      }
      let end = ContinuousClock.now
      let after = core.metrics
      samples.latencies.append((end - start).seconds)
      samples.queuedAhead.append(before.queueDepth)
      samples.reducedDuring.append(after.actionsReduced - before.actionsReduced)
      samples.longestStall = max(samples.longestStall, (end - due).seconds)
    }
    return samples
  }
}

/// What the prober measured, call by call.
struct ProbeSamples: Sendable {
  /// Each awaiting call's duration, in seconds.
  var latencies: [Double] = []
  /// `core.metrics.queueDepth` just before each call.
  var queuedAhead: [Int] = []
  /// How many actions the core reduced (by anyone) while each call ran:
  /// `core.metrics.actionsReduced` after it less before it.
  var reducedDuring: [Int] = []
  /// The longest time from when a call was due until it returned.
  var longestStall = 0.0

  init() {
    latencies.reserveCapacity(2_000)
    queuedAhead.reserveCapacity(2_000)
    reducedDuring.reserveCapacity(2_000)
  }

  /// The median of `reducedDuring` over the slowest 1% of the calls (at
  /// least one).
  var reducedDuringSlowest: Int {
    let slowest = latencies.indices.sorted { latencies[$0] > latencies[$1] }.prefix(max(1, latencies.count / 100))
    return median(slowest.map { reducedDuring[$0] })
  }
}

struct FloodResult: Sendable {
  /// What the prober measured.
  let samples: ProbeSamples
  /// Each awaiting call's duration, in seconds.
  var latencies: [Double] { samples.latencies }
  /// The longest time from when a call was due until it returned: the
  /// call, and before it the wait for a thread to run the prober on.
  var longestStall: Double { samples.longestStall }
  /// `core.metrics.queueDepth` just before each call.
  var queuedAhead: [Int] { samples.queuedAhead }
  /// Actions the producers' `send` or `enqueue` calls accepted.
  let sent: Int
  /// Actions the prober dispatched.
  let dispatched: Int
  /// The count the state held once everyone was done.
  let reduced: Int
  /// Peak resident memory during the flood less resident memory before it;
  /// nil where the peak cannot be reset (not Linux).
  let peakGrowth: Int?
}
