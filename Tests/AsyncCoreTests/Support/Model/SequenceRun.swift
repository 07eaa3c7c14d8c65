import AsyncCore
import AsyncCoreProcessTestSupport
import AsyncCoreTesting

/// One random sequence: a core, its clock, the model, the observers, and the
/// driving loop. Used by one task only.
final class SequenceRun {
  let seed: UInt64
  var random: SplitMix64
  let clock = ManualClock()
  let probe = EffectProbe()
  let failures = Events<EffectFailure>()
  let core: ModelCore
  var model = Model()
  /// The action log registered first and read to the end: every reduced
  /// action, compared with the model's records.
  let journal: Observer
  var observers: [Observer] = []
  /// Handles of dispatches, checked after `shutdown(.immediate)`.
  var handles: [EffectHandle] = []
  var step = 0
  var operation = "registering the action log"
  var trace: [String]?
  var nextTag = 0
  var nextToken = 0
  var deadlines: Set<Int> = []

  static func run(seed: UInt64, tracing: Bool) async -> Divergence? {
    let run = await SequenceRun(seed: seed, tracing: tracing)
    do {
      try await run.drive()
      if let trace = run.trace { print("Seed \(seed): no divergence. Operations:\n" + trace.joined(separator: "\n")) }
      return nil
    } catch var divergence {
      divergence.seed = seed
      divergence.step = run.step
      divergence.operation = run.operation
      divergence.exercised = run.model.exercised
      divergence.trace = run.trace
      await run.core.shutdown(.immediate)  // ends effects and observers, whatever state it is in
      return divergence
    }
  }

  init(seed: UInt64, tracing: Bool) async {
    self.seed = seed
    random = SplitMix64(seed: seed)
    trace = tracing ? [] : nil
    core = Core(
      initialState: ModelState(),
      clock: clock,
      diagnostics: { [failures] in failures.record($0) },
      reducer: ModelReducer.make(clock: clock, probe: probe)
    )
    journal = await Observer(kind: .actionLog, core: core, model: model)
  }

  func drive() async throws(Divergence) {
    var steps = Int.random(in: 20...60, using: &random)
    while step < steps {
      step += 1
      if model.phase == .running {
        try await runningStep()
        // A few checks of the stopped core are enough.
        if model.phase == .stopped { steps = min(steps, step + Int.random(in: 1...4, using: &random)) }
      } else {
        try await stoppedStep()
      }
      let expected = model.phase == .running ? observers.count + 1 : 0
      try check(core.metrics.observers == expected, "observerCount", "\(core.metrics.observers), model \(expected)")
    }
    if model.phase == .running {
      step += 1
      try await shutdown(random.chance(50) ? .graceful : .immediate)
    }
  }

  // MARK: Checks

  func begin(_ operation: String) {
    self.operation = operation
    trace?.append("step \(step): \(operation)")
  }

  func check(_ condition: Bool, _ check: String, _ detail: @autoclosure () -> String, items: Set<Guarantee> = [])
    throws(Divergence)
  {
    guard condition else { throw divergence(check, detail(), items: items) }
  }

  func divergence(_ check: String, _ detail: String, items: Set<Guarantee> = []) -> Divergence {
    Divergence(check: check, detail: detail, items: items)
  }

  /// `core.waitUntilIdle()`; its only failure, the test's own time limit
  /// cancelling it, is a divergence.
  func waitUntilIdle() async throws(Divergence) {
    do { try await core.waitUntilIdle() } catch { throw divergence("waitUntilIdle", "cancelled before idle") }
  }
}
