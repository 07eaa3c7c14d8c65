import AsyncCore
import AsyncCoreProcessTestSupport
import AsyncCoreTesting
import Synchronization
import Testing

/// Everything at once on one core: producers sending and dispatching, observers
/// of every kind registering and leaving, effects starting and being cancelled.
/// Afterwards nothing was lost, duplicated or reordered, every observer that
/// stayed saw what its policy promises, and nothing is left running.
///
/// The size scales with `ASYNCCORE_STRESS_SCALE` (a factor of 16 producers ×
/// 50,000 actions): by default 1 in a plain run, and 0.25 under a sanitizer
/// (ThreadSanitizer makes this test about 5 times slower, and CI runs the suite
/// under it four times).
@Suite("Stress: producers, observers and effects at once", .hangDetector)
struct StressTests {
  static let producers = 16
  static let churners = 4

  /// 50,000 × the scale, at least 1,000 (enough for every kind of effect
  /// and observer to turn up); `nil` if the variable is not a positive number.
  static var actionsPerProducer: Int? {
    guard let text = Environment.string("ASYNCCORE_STRESS_SCALE") else {
      return Environment.sanitizer == nil ? 50_000 : 12_500
    }
    guard let scale = Double(text), scale > 0 else { return nil }
    return max(1_000, Int(50_000 * scale))
  }

  @Test("16 producers × 50,000 actions (× ASYNCCORE_STRESS_SCALE) while observers and effects come and go")
  func producersObserversAndEffects() async throws {
    let actionsPerProducer = try #require(
      Self.actionsPerProducer, "ASYNCCORE_STRESS_SCALE must be a positive number")
    let clock = ManualClock()
    let firedAccepted = Tally()
    let firedRefused = Tally()
    let failures = Events<EffectFailure>()
    let core = Core(
      initialState: Ledger(producers: Self.producers),
      clock: clock,
      diagnostics: { failures.record($0) },
      reducer: Self.reducer(firedAccepted: firedAccepted, firedRefused: firedRefused)
    )

    // Observers held to the end, registered before any action: they see everything.
    var everyState: [Task<EveryStateReport, Never>] = []
    for _ in 0..<2 { everyState.append(Self.consumeEveryState(await core.states(buffering: .all))) }
    var latest: [Task<LatestReport, Never>] = []
    for _ in 0..<2 { latest.append(Self.consumeLatest(await core.observe(\.reduced))) }
    let log = Self.consumeActions(await core.actions())
    let held = 5
    #expect(core.metrics.observers == held)

    let churners = (0..<Self.churners).map { index in
      Task { await Self.churn(core: core, seed: 1_000 + UInt64(index)) }
    }
    let reports = try await withThrowingTaskGroup(of: ProducerReport.self) { group in
      for producer in 0..<Self.producers {
        group.addTask { try await Self.produce(producer, count: actionsPerProducer, core: core, clock: clock) }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }

    // Churners leave by cancellation, the last way out: their observers are
    // unregistered by the time their tasks return.
    for churner in churners { churner.cancel() }
    var churned = ChurnReport()
    for churner in churners { churned.add(await churner.value) }
    #expect(core.metrics.observers == held, "observers left behind by the churners")

    // Every timer still asleep has a cancel id: cancel them all, then nothing is in flight.
    try await core.dispatch(.cancelAll)
    try await core.waitUntilIdle()
    #expect(clock.sleeperCount == 0, "timers still asleep after cancelling every id")

    let final = await core.state
    let total = Self.producers * actionsPerProducer
    let requestedFollowUps = reports.reduce(0) { $0 + $1.followUps }
    #expect(reports.allSatisfy { $0.refused == 0 }, "a running core refused an action")
    #expect(final.expected == Array(repeating: actionsPerProducer, count: Self.producers), "lost actions")
    #expect(final.skipped == 0, "actions reduced before one sent earlier by the same producer (lost or reordered)")
    #expect(final.repeated == 0, "actions reduced twice or late (duplicated or reordered)")
    #expect(final.followUps == requestedFollowUps, ".send follow-ups lost or duplicated")
    #expect(final.fired == firedAccepted.value, "actions effects sent and the core accepted, but not reduced once")
    #expect(final.reduced == total + final.followUps + final.fired + 1, "actions of unknown origin")  // + .cancelAll
    // A timer cancelled between waking and sending is refused and reported,
    // once for its effect (each sends once): nothing else is reported.
    let refusals = failures.all.filter { failure in
      guard case .sendRefused(_, _, .effectCancelled)? = failure.error as? CoreDiagnostic else { return false }
      return true
    }
    #expect(refusals.count == failures.all.count, "effects reported errors: \(failures.all.prefix(3))")
    #expect(refusals.count == firedRefused.value, "refused sends not reported once each")

    // After an outside shutdown(.immediate) returns, every
    // EffectHandle is finished. The core is idle already, so the immediate mode
    // changes nothing else.
    await core.shutdown(.immediate)
    let handles = reports.flatMap(\.handles)
    #expect(!handles.isEmpty)
    #expect(handles.allSatisfy { $0.isFinished }, "an effect handle is unfinished after shutdown(.immediate)")
    for handle in handles { try await handle.finish() }  // returns at once

    for consumer in everyState {
      let report = await consumer.value
      #expect(report.gaps == 0, "an every-state observer missed or repeated a state")
      #expect(report.received == final.reduced + 1, "an every-state observer did not see every state")
      #expect(report.last == final, "an every-state observer did not end on the final state")
    }
    for consumer in latest {
      let report = await consumer.value
      #expect(report.wentBack == 0, "a latest observer went back or repeated a value")
      #expect(report.last == final.reduced, "a latest observer did not end on the final state")
    }
    let logged = await log.value
    #expect(logged.gaps == 0, "the action log skipped, repeated or mismatched a record")
    #expect(logged.received == final.reduced, "the action log missed actions")
    #expect(core.metrics.observers == 0)
    #expect(churned.values > 0 && churned.gaps == 0, "a churning observer saw a gap or went back: \(churned)")
  }

  // MARK: - The core under test

  /// What the reducer keeps: enough to tell lost, duplicated and reordered
  /// actions apart, and a counter every action moves.
  struct Ledger: Sendable, Equatable {
    /// Every reduced action adds one, so consecutive states always differ
    /// and deduplication never hides one.
    var reduced = 0
    /// Per producer, the sequence number expected next.
    var expected: [Int]
    /// Producer actions whose sequence number was ahead of the expected one.
    var skipped = 0
    /// Producer actions whose sequence number was behind the expected one.
    var repeated = 0
    var followUps = 0
    var fired = 0

    init(producers: Int) {
      expected = Array(repeating: 0, count: producers)
    }
  }

  enum Work: Sendable {
    case none
    /// A `.run` asleep for a second of the manual clock, then sending `.fired`.
    case timer(id: Int, cancelInFlight: Bool)
    /// A `.run` that sends `.fired` at once.
    case quick
    /// `.send(.followUp)`.
    case followUp
    case cancel(id: Int)
  }

  enum Action: Sendable {
    case produce(producer: Int, sequence: Int, work: Work)
    case followUp
    case fired
    case cancelAll
  }

  static let timerIDs = 0..<4

  static func reducer(firedAccepted: Tally, firedRefused: Tally) -> @Sendable (inout Ledger, Action) -> Effect<Action> {
    { state, action in
      state.reduced += 1
      switch action {
      case .produce(let producer, let sequence, let work):
        let expected = state.expected[producer]
        if sequence > expected { state.skipped += 1 }
        if sequence < expected { state.repeated += 1 }
        state.expected[producer] = max(expected, sequence + 1)
        switch work {
        case .none:
          return .none
        case .timer(let id, let cancelInFlight):
          return .run { send in
            try await send.clock.sleep(for: .seconds(1))
            if await send(.fired) == .accepted { firedAccepted.add() } else { firedRefused.add() }
          }
          .cancellable(id: id, cancelInFlight: cancelInFlight)
        case .quick:
          return .run { send in
            if await send(.fired) == .accepted { firedAccepted.add() } else { firedRefused.add() }
          }
        case .followUp:
          return .send(.followUp)
        case .cancel(let id):
          return .cancel(id: id)
        }
      case .followUp:
        state.followUps += 1
        return .none
      case .fired:
        state.fired += 1
        return .none
      case .cancelAll:
        return .merge(timerIDs.map { .cancel(id: $0) })
      }
    }
  }

  // MARK: - Producers

  struct ProducerReport: Sendable {
    var refused = 0
    var followUps = 0
    /// Handles of some dispatches that started effects.
    var handles: [EffectHandle] = []
  }

  /// Sends this producer's actions in order, through every route: `send`,
  /// `send(contentsOf:)`, `dispatch`, `dispatch(contentsOf:)`; some start
  /// effects or cancel them, and now and then the clock moves on a second.
  static func produce(
    _ producer: Int,
    count: Int,
    core: Core<Ledger, Action>,
    clock: ManualClock
  ) async throws -> ProducerReport {
    var random = SplitMix64(seed: UInt64(producer))
    var report = ProducerReport()
    var sequence = 0
    var nextAdvance = 2_000
    while sequence < count {
      let size = min(count - sequence, random.chance(50) ? 1 : Int.random(in: 2...64, using: &random))
      var batch: [Action] = []
      var startsEffects = false
      for _ in 0..<size {
        let work = randomWork(&random)
        switch work {
        case .none, .cancel: break
        case .followUp:
          report.followUps += 1
          startsEffects = true
        case .timer, .quick: startsEffects = true
        }
        batch.append(.produce(producer: producer, sequence: sequence, work: work))
        sequence += 1
      }
      if random.chance(70) {
        let result = size == 1 ? core.send(batch[0]) : core.send(contentsOf: batch)
        if result != .accepted { report.refused += 1 }
      } else {
        let handle = try await size == 1 ? core.dispatch(batch[0]) : core.dispatch(contentsOf: batch)
        if startsEffects && report.handles.count < 32 { report.handles.append(handle) }
      }
      if sequence >= nextAdvance {
        nextAdvance += 2_000
        await clock.advance(by: .seconds(1))  // timers asleep now fire
      }
    }
    return report
  }

  static func randomWork(_ random: inout SplitMix64) -> Work {
    switch Int.random(in: 0..<1_000, using: &random) {
    case 0..<10: .timer(id: Int.random(in: timerIDs, using: &random), cancelInFlight: random.chance(50))
    case 10..<15: .quick
    case 15..<20: .followUp
    case 20..<25: .cancel(id: Int.random(in: timerIDs, using: &random))
    default: .none
    }
  }

  // MARK: - Observers

  struct EveryStateReport: Sendable {
    var received = 0
    var gaps = 0
    var last: Ledger?
  }

  /// Reads every state to the end; consecutive states must be consecutive
  /// by the reducer's counter.
  static func consumeEveryState(_ states: CoreStream<Ledger>) -> Task<EveryStateReport, Never> {
    Task {
      var report = EveryStateReport()
      for await state in states {
        if let last = report.last, state.reduced != last.reduced + 1 { report.gaps += 1 }
        report.received += 1
        report.last = state
      }
      return report
    }
  }

  struct LatestReport: Sendable {
    var wentBack = 0
    var last: Int?
  }

  /// Reads a latest-value observer to the end: it may skip, never go back
  /// or repeat (every action moves the counter).
  static func consumeLatest(_ values: CoreStream<Int>) -> Task<LatestReport, Never> {
    Task {
      var report = LatestReport()
      for await value in values {
        if let last = report.last, value <= last { report.wentBack += 1 }
        report.last = value
      }
      return report
    }
  }

  struct ActionLogReport: Sendable {
    var received = 0
    var gaps = 0
  }

  /// Reads the action log to the end: each record moves the counter by one
  /// and starts where the one before ended.
  static func consumeActions(_ records: CoreStream<ActionRecord<Ledger, Action>>) -> Task<ActionLogReport, Never> {
    Task {
      var report = ActionLogReport()
      var lastAfter: Int?
      for await record in records {
        if record.stateAfter.reduced != record.stateBefore.reduced + 1 { report.gaps += 1 }
        if let lastAfter, record.stateBefore.reduced != lastAfter { report.gaps += 1 }
        lastAfter = record.stateAfter.reduced
        report.received += 1
      }
      return report
    }
  }

  struct ChurnReport: Sendable, CustomStringConvertible {
    var observers = 0
    var values = 0
    var gaps = 0

    mutating func add(_ other: ChurnReport) {
      observers += other.observers
      values += other.values
      gaps += other.gaps
    }

    var description: String { "\(observers) observers, \(values) values, \(gaps) gaps" }
  }

  /// Registers observers of every kind, one after another, until cancelled:
  /// each reads a few values and leaves by `break`, or is dropped unread,
  /// or is still reading when the task is cancelled.
  static func churn(core: Core<Ledger, Action>, seed: UInt64) async -> ChurnReport {
    var random = SplitMix64(seed: seed)
    var report = ChurnReport()
    while !Task.isCancelled {
      let limit = Int.random(in: 1...300, using: &random)
      var taken = 0
      report.observers += 1
      switch Int.random(in: 0..<4, using: &random) {
      case 0:
        var last: Ledger?
        for await state in await core.states(buffering: .all) {
          if let last, state.reduced != last.reduced + 1 { report.gaps += 1 }
          last = state
          taken += 1
          if taken == limit { break }
        }
      case 1:
        var last: Int?
        for await value in await core.observe(\.reduced) {
          if let last, value <= last { report.gaps += 1 }
          last = value
          taken += 1
          if taken == limit { break }
        }
      case 2:
        var lastAfter: Int?
        for await record in await core.actions() {
          if record.stateAfter.reduced != record.stateBefore.reduced + 1 { report.gaps += 1 }
          if let lastAfter, record.stateBefore.reduced != lastAfter { report.gaps += 1 }
          lastAfter = record.stateAfter.reduced
          taken += 1
          if taken == limit { break }
        }
      default:
        _ = await core.states(buffering: random.chance(50) ? .all : .latest)  // dropped unread
      }
      report.values += taken
    }
    return report
  }

  /// A count of the actions effects sent that the core accepted.
  final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
  }
}
