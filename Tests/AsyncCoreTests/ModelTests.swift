// Random sequences of operations on a core, each checked against a plain
// sequential model of it: a struct that applies the same reducer in the
// documented order (issue 7's semantics, /work/spec/semantics.md).
//
// Each sequence drives one core from one task, so the order in which the core
// reduces is fixed by what that task does: its sends and dispatches in program
// order, `.send` follow-ups breadth first right after the action that returned
// them (item 10), and what a `.run` effect sends only when the test moves the
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
// `ASYNCCORE_MODEL_SEED=<seed> swift test --disable-xctest --filter ModelTests`;
// run more or fewer sequences with `ASYNCCORE_MODEL_SEQUENCES=<count>` (by
// default 10,000, and 2,500 under a sanitizer).
//
// Checks that depend on semantics not in every build yet name their item
// ("[item 10]"), and a divergence lists the items the sequence had relied on:
// 2 (latest observers deduplicate against the value last taken), 3 (every
// observing call deduplicates, `states()` included), 4 (cancel ids match by
// type and value), 8 (handles finished after `shutdown(.immediate)`), 9
// (`hasShutDown`), 10 (`.send` follow-ups breadth first, before `dispatch`
// returns: the model's order, so every state comparison of a sequence that
// had follow-ups relies on it), 11 (follow-ups still reduced during
// `shutdown(.immediate)`, refused effects reported as `CoreError.shutDown`).
//
// Before any wait that only a correct core ends (reading an observer, waiting
// for idle or for a graceful shutdown, moving the clock), the test reads the
// action log up to the model's count: a core that diverged unnoticed shows it
// there, record by record, instead of leaving the test waiting.

import AsyncCore
import Testing

/// Random operation sequences on a core, each compared with a sequential model of it.
@Suite("Model: random operations against a sequential model", .timeLimit(.minutes(2)))
struct ModelTests {
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
            + tally(\.summary) + "\nBy the semantics items the sequence had relied on:\n"
            + tally { $0.exercised.isEmpty ? "none" : Divergence.list($0.exercised) }))
    }
  }
}

// MARK: - The core under test

/// The state: a log that most actions append a unique tag to, and a value
/// that `.set` may leave unchanged (so deduplication has work to do).
private struct ModelState: Sendable, Equatable, CustomStringConvertible {
  var log: [Int] = []
  var value = 0

  var description: String { "{log \(log), value \(value)}" }
}

/// A cancel id of one of two types: item 4 says they never match each other.
private enum CancelKey: Sendable, Hashable, CustomStringConvertible {
  case int(Int)
  case uint8(UInt8)

  var description: String {
    switch self {
    case .int(let value): "\(value) as Int"
    case .uint8(let value): "\(value) as UInt8"
    }
  }
}

/// A `.run` effect: asleep on the manual clock until `fireAt` (absolute
/// seconds, unique in the sequence), then sends `sends`; `then` is
/// concatenated after it.
private struct TimerSpec: Sendable, Equatable, CustomStringConvertible {
  let token: Int
  let fireAt: Int
  let id: CancelKey?
  let cancelInFlight: Bool
  let sends: [ModelAction]
  let then: Continuation?

  var description: String {
    var text = "timer \(token) at \(fireAt)s"
    if let id { text += cancelInFlight ? " id \(id) cancelling in flight" : " id \(id)" }
    text += " sends \(sends)"
    if let then { text += " then \(then)" }
    return text
  }
}

/// What a timer's `.concatenate` runs after it.
private indirect enum Continuation: Sendable, Equatable, CustomStringConvertible {
  /// `.send(action)`, asynchronous because the concatenation holds a `.run`.
  case send(ModelAction)
  /// A second timer (no id or continuation of its own; the concatenation's id covers it).
  case timer(TimerSpec)

  var description: String {
    switch self {
    case .send(let action): "send \(action)"
    case .timer(let timer): "(\(timer))"
    }
  }
}

private indirect enum ModelAction: Sendable, Equatable, CustomStringConvertible {
  case log(Int)
  case set(Int)
  /// Logs, then returns `.merge` (or `.concatenate`) of `.send` for each child.
  case fanOut(Int, [ModelAction], concatenated: Bool)
  /// Logs, then returns `.merge` of the timers' effects.
  case timers(Int, [TimerSpec])
  /// Logs, then returns `.cancel(id:)`.
  case cancel(Int, CancelKey)

  var description: String {
    switch self {
    case .log(let tag): "log \(tag)"
    case .set(let value): "set \(value)"
    case .fanOut(let tag, let children, let concatenated):
      "\(concatenated ? "concatenate" : "merge") \(tag) \(children)"
    case .timers(let tag, let timers): "timers \(tag) \(timers)"
    case .cancel(let tag, let id): "cancel \(tag) id \(id)"
    }
  }
}

private typealias ModelCore = Core<ModelState, ModelAction>
private typealias Record = ActionRecord<ModelState, ModelAction>

/// What a timer's effect reports: that it started, and how it ended.
private final class EffectProbe: Sendable {
  struct Ending: Sendable {
    /// The sleep completed: the effect was not cancelled before its deadline.
    var fired = false
    /// Every action it sent was accepted.
    var allAccepted = true
  }

  let started = Signals<Int, Bool>()
  let ended = Signals<Int, Ending>()
}

private enum ModelReducer {
  static func make(clock: ManualClock, probe: EffectProbe) -> ModelCore.Reducer {
    { state, action in
      switch action {
      case .log(let tag):
        state.log.append(tag)
        return .none
      case .set(let value):
        state.value = value
        return .none
      case .fanOut(let tag, let children, let concatenated):
        state.log.append(tag)
        let sends = children.map { Effect<ModelAction>.send($0) }
        return concatenated ? .concatenate(sends) : .merge(sends)
      case .timers(let tag, let timers):
        state.log.append(tag)
        return .merge(timers.map { effect(for: $0, clock: clock, probe: probe) })
      case .cancel(let tag, let id):
        state.log.append(tag)
        switch id {
        case .int(let value): return .cancel(id: value)
        case .uint8(let value): return .cancel(id: value)
        }
      }
    }
  }

  static func effect(for timer: TimerSpec, clock: ManualClock, probe: EffectProbe) -> Effect<ModelAction> {
    var effect = run(timer, clock: clock, probe: probe)
    switch timer.then {
    case .send(let action): effect = .concatenate(effect, .send(action))
    case .timer(let next): effect = .concatenate(effect, run(next, clock: clock, probe: probe))
    case nil: break
    }
    switch timer.id {
    case .int(let value): return effect.cancellable(id: value, cancelInFlight: timer.cancelInFlight)
    case .uint8(let value): return effect.cancellable(id: value, cancelInFlight: timer.cancelInFlight)
    case nil: return effect
    }
  }

  /// Sleeps until an absolute deadline on the test's own clock (the one the
  /// core was given; `send.clock` is an `any Clock` whose instants a test
  /// cannot name), so when the effect starts does not move when it fires.
  static func run(_ timer: TimerSpec, clock: ManualClock, probe: EffectProbe) -> Effect<ModelAction> {
    let (token, deadline, sends) = (timer.token, ManualClock.Instant(offset: .seconds(timer.fireAt)), timer.sends)
    return .run { send in
      probe.started.raise(token, true)
      var ending = EffectProbe.Ending()
      defer { probe.ended.raise(token, ending) }
      try await clock.sleep(until: deadline, tolerance: nil)
      ending.fired = true
      for action in sends {
        if !(await send(action)) { ending.allAccepted = false }
      }
    }
  }
}

// MARK: - The model

/// The core as a plain sequential program: every action accepted is reduced at
/// once, in the order the core must reduce it (the driving task's order, with
/// `.send` follow-ups breadth first right after their action).
private struct Model {
  struct LiveTimer {
    let token: Int
    let fireAt: Int
    let id: CancelKey?
    let sends: [ModelAction]
    let then: Continuation?
  }

  /// What one reduction (an action and its follow-ups) did.
  struct Reduction {
    var followUps = 0
    var timersStarted = 0
    /// Effects other than `.send`: a core refusing new effects reports each (item 11).
    var refusableEffects = 0

    static func += (lhs: inout Reduction, rhs: Reduction) {
      lhs.followUps += rhs.followUps
      lhs.timersStarted += rhs.timersStarted
      lhs.refusableEffects += rhs.refusableEffects
    }
  }

  enum Phase { case running, stopped }

  var state = ModelState()
  /// Every action reduced, in order: what the action log must deliver.
  var records: [Record] = []
  var live: [Int: LiveTimer] = [:]
  var now = 0
  var phase = Phase.running
  /// The semantics items this sequence has relied on so far.
  var exercised: Set<Int> = []
  /// What was sent since the core last reduced everything it had accepted:
  /// a `shutdown(.immediate)` may reduce it after refusing new effects.
  var unflushed = Reduction()

  /// Reduces `action`, then its `.send` follow-ups breadth first (item 10):
  /// A returns merge(send B, send C), B returns send D: A, B, C, D.
  mutating func reduce(_ action: ModelAction) -> Reduction {
    var reduction = Reduction()
    var queue = [action]
    var next = 0
    while next < queue.count {
      let action = queue[next]
      next += 1
      let before = state
      switch action {
      case .log(let tag):
        state.log.append(tag)
      case .set(let value):
        state.value = value
      case .fanOut(let tag, let children, _):
        state.log.append(tag)
        queue.append(contentsOf: children)
      case .timers(let tag, let timers):
        state.log.append(tag)
        for timer in timers { start(timer) }
        reduction.timersStarted += timers.count
        reduction.refusableEffects += timers.count
      case .cancel(let tag, let id):
        state.log.append(tag)
        cancel(id)
        reduction.refusableEffects += 1
      }
      records.append(Record(action: action, stateBefore: before, stateAfter: state))
    }
    reduction.followUps = queue.count - 1
    if reduction.followUps > 0 { exercised.insert(10) }
    return reduction
  }

  /// An action from outside, sent: reduced at once in the model.
  mutating func send(_ action: ModelAction) {
    unflushed += reduce(action)
  }

  mutating func start(_ timer: TimerSpec) {
    if let id = timer.id, timer.cancelInFlight { cancel(id) }
    live[timer.token] = LiveTimer(
      token: timer.token, fireAt: timer.fireAt, id: timer.id, sends: timer.sends, then: timer.then)
  }

  /// Item 4: ids match only when type and value do.
  mutating func cancel(_ id: CancelKey) {
    live = live.filter { $0.value.id != id }
  }

  var nextTimer: LiveTimer? {
    live.values.min { $0.fireAt < $1.fireAt }
  }

  /// The clock reached `timer`'s deadline: what it sends is reduced, in
  /// order, and its continuation runs.
  mutating func fire(_ timer: LiveTimer) {
    live[timer.token] = nil
    now = timer.fireAt
    // A concatenated timer belongs to the same effect, under the same id, from
    // the start: what the first part sends may cancel it.
    if case .timer(let next) = timer.then {
      live[next.token] = LiveTimer(token: next.token, fireAt: next.fireAt, id: timer.id, sends: next.sends, then: nil)
    }
    for action in timer.sends { _ = reduce(action) }
    if case .send(let action) = timer.then { _ = reduce(action) }
  }
}

// MARK: - Observers

/// What an observer delivers, as one comparable type.
private enum Seen: Equatable, CustomStringConvertible {
  case state(ModelState)
  case int(Int)
  case record(Record)

  var description: String {
    switch self {
    case .state(let state): "\(state)"
    case .int(let value): "\(value)"
    case .record(let record): "[\(record.action): \(record.stateBefore) -> \(record.stateAfter)]"
    }
  }
}

/// One observer the sequence registered, with what the model says it must see.
private final class Observer {
  enum Kind: CaseIterable {
    /// `states(buffering: .all)`: every state that differs from the one before (item 3).
    case everyState
    /// `observe(\.value, buffering: .all)`.
    case everyValue
    /// `states()`: latest, deduplicated (items 2 and 3).
    case latestState
    /// `observe(\.log.count)`: latest, deduplicated (item 2).
    case latestCount
    /// `actions()`: every record, never deduplicated.
    case actionLog

    var isLatest: Bool { self == .latestState || self == .latestCount }

    func select(_ state: ModelState) -> Seen {
      switch self {
      case .everyState, .latestState, .actionLog: .state(state)
      case .everyValue: .int(state.value)
      case .latestCount: .int(state.log.count)
      }
    }

    /// The items a check of this observer depends on.
    var items: Set<Int> {
      switch self {
      case .everyState: [3]
      case .latestState: [2, 3]
      case .latestCount: [2]
      case .everyValue, .actionLog: []
      }
    }
  }

  let kind: Kind
  private let pull: () async -> Seen?
  /// Values taken so far.
  var taken = 0
  /// Latest observers: the last value taken and where it sits in the history.
  var lastTaken: Seen?
  var lastPosition = -1
  /// The history so far, and how many of the model's records it covers.
  private var values: [Seen]
  private var scanned: Int

  /// Registers an observer of `kind`; its stream stays unread until the
  /// first `next()`.
  init(kind: Kind, core: ModelCore, model: Model) async {
    self.kind = kind
    values = kind == .actionLog ? [] : [kind.select(model.state)]
    scanned = model.records.count
    switch kind {
    case .everyState: pull = Self.puller(await core.states(buffering: .all)) { .state($0) }
    case .everyValue: pull = Self.puller(await core.observe(\.value, buffering: .all)) { .int($0) }
    case .latestState: pull = Self.puller(await core.states()) { .state($0) }
    case .latestCount: pull = Self.puller(await core.observe(\.log.count)) { .int($0) }
    case .actionLog: pull = Self.puller(await core.actions()) { .record($0) }
    }
  }

  /// Holds `stream` unread until the first pull, then its iterator: an
  /// observer may stay registered without a loop for a while.
  private static func puller<Element: Sendable>(
    _ stream: CoreStream<Element>,
    _ wrap: @escaping (Element) -> Seen
  ) -> () async -> Seen? {
    var stream: CoreStream<Element>? = stream
    var iterator: CoreStream<Element>.Iterator?
    return {
      if let unread = stream {
        iterator = unread.makeAsyncIterator()
        stream = nil
      }
      return await iterator?.next().map(wrap)
    }
  }

  func next() async -> Seen? {
    await pull()
  }

  /// Every value the model says this observer receives in order (for the
  /// every-value kinds and the action log), or could receive (latest kinds).
  func history(_ model: Model) -> [Seen] {
    while scanned < model.records.count {
      let record = model.records[scanned]
      scanned += 1
      if kind == .actionLog {
        values.append(.record(record))
        continue
      }
      let value = kind.select(record.stateAfter)
      // Item 3: every observing call deduplicates Equatable values; latest
      // observers may take any of these, so they keep them all.
      if kind.isLatest || value != values.last { values.append(value) }
    }
    return values
  }

  /// Whether `next()` returns without waiting for anything but the core's
  /// own drain: an every-value observer has values the model reduced and it
  /// has not taken; a latest one (item 2: deduplicated against what it
  /// last took) whenever the current value differs from the last it took.
  func hasValue(_ model: Model) -> Bool {
    if kind.isLatest { return lastTaken.map { $0 != kind.select(model.state) } ?? true }
    return history(model).count > taken
  }
}

// MARK: - Divergence

private struct Divergence: Error, Sendable, CustomStringConvertible {
  var seed: UInt64 = 0
  var step = 0
  var operation = ""
  /// A short name of the failed check, for the summary.
  let check: String
  let detail: String
  /// The semantics items the check itself relies on.
  var items: Set<Int>
  /// The semantics items the sequence had relied on before it diverged.
  var exercised: Set<Int> = []
  var trace: [String]?

  var summary: String {
    items.isEmpty ? check : "\(check) [\(Self.list(items))]"
  }

  var description: String {
    var text = """
      Model divergence, seed \(seed), step \(step) (\(operation)): \(summary): \(detail)
      Semantics the sequence relied on so far: \(exercised.isEmpty ? "no numbered item" : Self.list(exercised)).
      Replay this sequence alone, printing its operations: \
      ASYNCCORE_MODEL_SEED=\(seed) swift test --disable-xctest --filter ModelTests
      """
    if let trace { text += "\nOperations:\n" + trace.joined(separator: "\n") }
    return text
  }

  static func list(_ items: Set<Int>) -> String {
    (items.count == 1 ? "item " : "items ") + items.sorted().map(String.init).joined(separator: ", ")
  }
}

// MARK: - One sequence

/// One random sequence: a core, its clock, the model, the observers, and the
/// driving loop. Used by one task only.
private final class SequenceRun {
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
  /// Handles of dispatches, checked after `shutdown(.immediate)` (item 8).
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
      try check(core.observerCount == expected, "observerCount", "\(core.observerCount), model \(expected)")
    }
    if model.phase == .running {
      step += 1
      try await shutdown(random.chance(50) ? .graceful : .immediate)
    }
  }

  // MARK: Operations while running

  func runningStep() async throws(Divergence) {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<18:
      let action = topLevelAction()
      try await preflight(action)
      begin("send \(action)")
      model.send(action)
      try check(core.send(action), "send accepted", "send returned false on a running core")
    case 18..<26:
      let actions = (0..<Int.random(in: 1...4, using: &random)).map { _ in makeAction(depth: 0, base: model.now) }
      begin("send(contentsOf: \(actions))")
      for action in actions { model.send(action) }
      try check(core.send(contentsOf: actions), "send accepted", "send(contentsOf:) returned false on a running core")
    case 26..<40:
      let action = topLevelAction()
      try await preflight(action)
      begin("dispatch \(action)")
      try await dispatch([action], contentsOf: false)
    case 40..<47:
      let actions = (0..<Int.random(in: 1...4, using: &random)).map { _ in makeAction(depth: 0, base: model.now) }
      begin("dispatch(contentsOf: \(actions))")
      try await dispatch(actions, contentsOf: true)
    case 47..<52:
      begin("await core.state")
      try await sync("await core.state")
    case 52..<62 where observers.count < 6:
      let kind = Observer.Kind.allCases.randomElement(using: &random)!
      begin("observe \(kind)")
      observers.append(await Observer(kind: kind, core: core, model: model))
      model.unflushed = Model.Reduction()  // registering reduces what was sent first
    case 62..<76 where observers.contains { $0.hasValue(model) }:
      let readable = observers.indices.filter { observers[$0].hasValue(model) }
      let index = readable.randomElement(using: &random)!
      let count = Int.random(in: 1...4, using: &random)
      begin("read \(count) from observer \(index) (\(observers[index].kind))")
      try await catchUpJournal()
      try await read(observers[index], upTo: count)
    case 76..<80 where !observers.isEmpty:
      let index = Int.random(in: observers.indices, using: &random)
      begin("drop observer \(index) (\(observers[index].kind))")
      observers.remove(at: index)
    case 80..<93:
      try await advance()
    case 93..<98 where model.live.isEmpty:
      begin("waitUntilIdle")
      try await catchUpJournal()
      await core.waitUntilIdle()
      try await sync("waitUntilIdle")
    case 98..<100:
      try await shutdown(random.chance(50) ? .graceful : .immediate)
    default:
      try await advance()
    }
  }

  func dispatch(_ actions: [ModelAction], contentsOf: Bool) async throws(Divergence) {
    var reduction = Model.Reduction()
    for action in actions { reduction += model.reduce(action) }
    model.unflushed = Model.Reduction()  // dispatch reduces what was sent first
    let handle: EffectHandle
    do {
      handle = try await contentsOf ? core.dispatch(contentsOf: actions) : core.dispatch(actions[0])
    } catch {
      throw divergence("dispatch accepted", "dispatch threw \(error) on a running core")
    }
    handles.append(handle)
    if reduction.timersStarted == 0 {
      // Item 10: `.send` follow-ups are reduced before dispatch returns, so
      // a dispatch that started no `.run` has nothing left to wait for.
      try check(handle.isFinished, "handle finished", "a dispatch that started no .run is unfinished", items: [10])
    }
    // Item 10: dispatch returns after the follow-ups; `state` right after includes them.
    if random.chance(60) { try await sync("dispatch") }
  }

  /// The model's state is the core's once everything accepted is reduced.
  func sync(_ after: String) async throws(Divergence) {
    let state = await core.state
    try check(state == model.state, "state after \(after)", "core \(state), model \(model.state)")
    model.unflushed = Model.Reduction()
    try await catchUpJournal()
  }

  /// Reads the action log up to the model's count, record by record: waits
  /// for the core's drain without reducing anything itself. Once it caught
  /// up, the core reduced exactly the model's actions, in the model's order,
  /// from the same states: it started and cancelled the same effects, and
  /// every observer has been given what the model expects, so waiting on
  /// either cannot hang on a core that diverged earlier unnoticed.
  func catchUpJournal() async throws(Divergence) {
    while journal.taken < model.records.count {
      guard let record = await journal.next() else {
        throw divergence("action log", "ended after \(journal.taken) records, the model has \(model.records.count)")
      }
      let expected = Seen.record(model.records[journal.taken])
      try check(record == expected, "action log", "record \(journal.taken) is \(record), the model's is \(expected)")
      journal.taken += 1
    }
    model.unflushed = Model.Reduction()  // everything accepted has been reduced
  }

  /// Takes up to `count` values the model says `observer` has.
  func read(_ observer: Observer, upTo count: Int) async throws(Divergence) {
    var read = 0
    while read < count && observer.hasValue(model) {
      guard let value = await observer.next() else {
        throw divergence("observer ended", "\(observer.kind) ended while the core runs")
      }
      try accept(value, by: observer)
      read += 1
      if observer.kind.isLatest { return }  // its next value may not exist yet
    }
  }

  /// Checks one value `observer` received against the model.
  func accept(_ value: Seen, by observer: Observer) throws(Divergence) {
    let history = observer.history(model)
    if observer.kind.isLatest {
      // Any state reached since the last one taken, never an older one, and
      // never the one taken last again (items 2 and 3).
      try check(
        value != observer.lastTaken, "latest repeats", "\(observer.kind) received \(value) twice in a row",
        items: observer.kind.items)
      let position = history.indices.first { $0 > observer.lastPosition && history[$0] == value }
      guard let position else {
        throw divergence(
          "latest value", "\(observer.kind) received \(value), not a state reached after \(observer.lastTaken as Any)",
          items: observer.kind.items)
      }
      observer.lastPosition = position
      observer.lastTaken = value
    } else {
      let index = observer.taken
      try check(
        index < history.count && history[index] == value, "every-value sequence",
        "\(observer.kind) value \(index) is \(value), the model's is "
          + (index < history.count ? "\(history[index])" : "none (\(history.count) values)"),
        items: observer.kind.items)
    }
    observer.taken += 1
  }

  // MARK: Time

  /// Moves the clock to the next live timer's deadline and waits until the
  /// effect ended and what it sent was reduced; with no live timer, moves
  /// it a few seconds on.
  func advance() async throws(Divergence) {
    // Cancellations sent so far must be in effect before time moves.
    begin("advance: wait until what was sent is reduced")
    try await catchUpJournal()
    guard let timer = model.nextTimer else {
      let seconds = Int.random(in: 1...5, using: &random)
      begin("advance \(seconds)s (no live timer)")
      model.now += seconds
      clock.advance(by: .seconds(seconds))
      return
    }
    begin("advance to \(timer.fireAt)s: timer \(timer.token) fires")
    clock.advance(by: .seconds(timer.fireAt - model.now))
    guard let ending = await probe.ended.wait(for: timer.token) else {
      throw divergence("timer ended", "the wait for timer \(timer.token) was cancelled (time limit?)")
    }
    try check(
      ending.fired, "timer fired",
      "timer \(timer.token) (id \(timer.id as Any)) was cancelled; the model has no cancel for it",
      items: model.exercised.contains(4) ? [4] : [])
    try check(ending.allAccepted, "effect send accepted", "timer \(timer.token)'s send was refused")
    model.fire(timer)
    try await catchUpJournal()  // what it sent, and a concatenated .send after it
    try await sync("timer \(timer.token) fired")
  }

  /// Before a cancel by a `UInt8` id: the model cancels no `Int` id with it
  /// (item 4). A core that does must find those effects started, so the
  /// wrong cancellation shows when they end unfired instead of as a hang.
  func preflight(_ action: ModelAction) async throws(Divergence) {
    guard case .cancel(_, .uint8(let value)) = action else { return }
    model.exercised.insert(4)
    begin("before cancelling \(value) as UInt8: wait for Int-\(value) timers to start")
    try await catchUpJournal()
    for timer in model.live.values where timer.id == .int(Int(value)) {
      guard await probe.started.wait(for: timer.token) != nil else {
        throw divergence("timer started", "the wait for timer \(timer.token) was cancelled (time limit?)")
      }
    }
  }

  // MARK: Shutdown

  func shutdown(_ mode: ShutdownMode) async throws(Divergence) {
    if mode == .graceful {
      begin("shutdown() (graceful)")
      try await catchUpJournal()  // the core runs exactly the effects the model does
      // Runs until the call's first suspension: by then outside actions are refused.
      let stopping = Task.immediate { [core] in await core.shutdown() }
      try await checkRefusals(while: "a graceful shutdown")
      // Every effect runs to its end and what it sends is reduced, effects
      // the follow-ups start included.
      while model.nextTimer != nil { try await advance() }
      begin("shutdown() (graceful): waiting for it to return")
      // If the test's time limit cancels the wait, hurry the shutdown rather than hang.
      await withTaskCancellationHandler {
        await stopping.value
      } onCancel: { [core] in
        Task { await core.shutdown(.immediate) }
      }
      try check(failures.all.isEmpty, "diagnostics", "effects reported \(failures.all)")
    } else {
      begin("shutdown(.immediate)")
      let refusableEffects = model.unflushed.refusableEffects
      if model.unflushed.followUps > 0 { model.exercised.insert(11) }
      await core.shutdown(.immediate)
      model.live = [:]
      // Item 8: every handle is finished once shutdown(.immediate) returned.
      let unfinished = handles.filter { !$0.isFinished }.count
      try check(unfinished == 0, "handles finished", "\(unfinished) of \(handles.count) unfinished", items: [8])
      // Item 11: effects the last reduced actions returned were refused, each
      // reported as CoreError.shutDown; no other effect failed.
      let failures = failures.all
      try check(
        failures.allSatisfy { $0.error as? CoreError == .shutDown } && failures.count <= refusableEffects,
        "refused effects reported", "\(failures.count) reports (at most \(refusableEffects)): \(failures)",
        items: [11])
    }
    model.phase = .stopped
    try check(core.hasShutDown, "hasShutDown", "false after shutdown returned", items: [9])
    try check(clock.sleeperCount == 0, "effects ended", "\(clock.sleeperCount) timers still asleep")
    let state = await core.state
    try check(state == model.state, "state after shutdown", "core \(state), model \(model.state)")
    try await finish(journal)
    for (index, observer) in observers.enumerated() {
      operation += "; observer \(index)"
      try await finish(observer)
    }
    observers = []
    for handle in handles { await handle.finish() }  // returns: nothing is left running
  }

  /// Reads an observer the core ended to its end: every value it has not
  /// taken, then the end of the loop.
  func finish(_ observer: Observer) async throws(Divergence) {
    while let value = await observer.next() { try accept(value, by: observer) }
    let history = observer.history(model)
    if observer.kind.isLatest {
      try check(
        observer.lastTaken == observer.kind.select(model.state), "latest ends on the final state",
        "\(observer.kind) ended on \(observer.lastTaken as Any), the final is \(observer.kind.select(model.state))")
    } else {
      try check(
        observer.taken == history.count, "every-value sequence",
        "\(observer.kind) ended after \(observer.taken) values, the model has \(history.count)",
        items: observer.kind.items)
    }
  }

  /// Outside actions are refused from the moment `shutdown` was called.
  func checkRefusals(while phase: String) async throws(Divergence) {
    let action = ModelAction.log(tag())
    try check(core.hasShutDown, "hasShutDown", "false \(phase)", items: [9])
    try check(!core.send(action), "send refused", "send returned true \(phase)")
    try check(!core.send(contentsOf: [action, action]), "send refused", "send(contentsOf:) returned true \(phase)")
    var thrown: CoreError?
    do throws(CoreError) {
      try await core.dispatch(action)
    } catch {
      thrown = error
    }
    try check(thrown == .shutDown, "dispatch refused", "dispatch threw \(thrown as Any) \(phase)")
    thrown = nil
    do throws(CoreError) {
      try await core.dispatch(contentsOf: [action])
    } catch {
      thrown = error
    }
    try check(thrown == .shutDown, "dispatch refused", "dispatch(contentsOf:) threw \(thrown as Any) \(phase)")
  }

  // MARK: Operations after shutdown

  func stoppedStep() async throws(Divergence) {
    switch Int.random(in: 0..<6, using: &random) {
    case 0:
      begin("sends and dispatches after shutdown")
      try await checkRefusals(while: "after shutdown")
    case 1:
      let kind = Observer.Kind.allCases.randomElement(using: &random)!
      begin("observe \(kind) after shutdown")
      // Registered on a stopped core: the current value (none for the log), then the end.
      let observer = await Observer(kind: kind, core: core, model: model)
      try await finish(observer)
      try check(
        observer.taken == (kind == .actionLog ? 0 : 1), "observer after shutdown",
        "\(kind) received \(observer.taken) values")
    case 2:
      let seconds = Int.random(in: 1...5, using: &random)
      begin("advance \(seconds)s after shutdown")
      clock.advance(by: .seconds(seconds))
      model.now += seconds
      try await sync("advancing a stopped core's clock")
    case 3:
      begin("waitUntilIdle after shutdown")
      await core.waitUntilIdle()
      try await sync("waitUntilIdle")
    case 4:
      let mode: ShutdownMode = random.chance(50) ? .graceful : .immediate
      begin("shutdown(\(mode)) again")
      await core.shutdown(mode)
      try await sync("a second shutdown")
    default:
      begin("await core.state after shutdown")
      try await sync("await core.state")
    }
  }

  // MARK: Generating actions

  /// An action for the driving task; now and then a cancel by a `UInt8` id
  /// (item 4), only here so `preflight` can prepare for it.
  func topLevelAction() -> ModelAction {
    guard random.chance(4) else { return makeAction(depth: 0, base: model.now) }
    return .cancel(tag(), .uint8(UInt8.random(in: 0..<3, using: &random)))
  }

  /// A random action; its timers fire after `base`, the clock time at which
  /// it is reduced. Nesting stops at depth 2.
  ///
  /// `sparing` is the id of the effect that sends this action, if any: the
  /// action, and the follow-ups reduced with it, never cancel that id (by
  /// `.cancel` or `cancelInFlight`). An effect that cancels itself through
  /// what it sends races with its own later sends, and the model could not
  /// say which of them the core refuses.
  func makeAction(depth: Int, base: Int, sparing spared: CancelKey? = nil) -> ModelAction {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<15 where depth < 2:
      let children = (0..<Int.random(in: 1...3, using: &random)).map { _ in
        makeAction(depth: depth + 1, base: base, sparing: spared)
      }
      return .fanOut(tag(), children, concatenated: random.chance(40))
    case 15..<30 where depth < 2:
      let timers = (0..<Int.random(in: 1...2, using: &random)).map { _ in
        makeTimer(depth: depth + 1, base: base, sparing: spared)
      }
      return .timers(tag(), timers)
    case 30..<42:
      let id = CancelKey.int(Int.random(in: 0..<3, using: &random))
      return id == spared ? .log(tag()) : .cancel(tag(), id)
    case 42..<65:
      return .set(Int.random(in: 0..<3, using: &random))
    default:
      return .log(tag())
    }
  }

  /// A random timer started at `base`, which never cancels `spared` in flight.
  func makeTimer(depth: Int, base: Int, sparing spared: CancelKey?) -> TimerSpec {
    let fireAt = deadline(after: base)
    let id: CancelKey? = random.chance(70) ? .int(Int.random(in: 0..<3, using: &random)) : nil
    let cancelInFlight = id != nil && id != spared && random.chance(40)
    let sends = (0..<Int.random(in: 1...2, using: &random)).map { _ in
      makeAction(depth: depth + 1, base: fireAt, sparing: id)
    }
    var then: Continuation?
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<20:
      then = .send(makeAction(depth: depth + 1, base: fireAt, sparing: id))
    case 20..<35:
      let nextFireAt = deadline(after: fireAt)
      let nextSends = [makeAction(depth: depth + 1, base: nextFireAt, sparing: id)]
      then = .timer(
        TimerSpec(token: token(), fireAt: nextFireAt, id: nil, cancelInFlight: false, sends: nextSends, then: nil))
    default:
      break
    }
    return TimerSpec(token: token(), fireAt: fireAt, id: id, cancelInFlight: cancelInFlight, sends: sends, then: then)
  }

  /// A deadline after `base` that no other timer of this sequence has: one
  /// effect wakes per advance, so what effects send arrives in a fixed order.
  func deadline(after base: Int) -> Int {
    var deadline = base + Int.random(in: 1...20, using: &random)
    while deadlines.contains(deadline) { deadline += 1 }
    deadlines.insert(deadline)
    return deadline
  }

  func tag() -> Int {
    nextTag += 1
    return nextTag
  }

  func token() -> Int {
    nextToken += 1
    return nextToken
  }

  // MARK: Checks

  func begin(_ operation: String) {
    self.operation = operation
    trace?.append("step \(step): \(operation)")
  }

  func check(_ condition: Bool, _ check: String, _ detail: @autoclosure () -> String, items: Set<Int> = [])
    throws(Divergence)
  {
    guard condition else { throw divergence(check, detail(), items: items) }
  }

  func divergence(_ check: String, _ detail: String, items: Set<Int> = []) -> Divergence {
    Divergence(check: check, detail: detail, items: items)
  }
}
