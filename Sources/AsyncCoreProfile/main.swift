// A profiling driver with a synchronous main, so that valgrind (which
// crashes on an async `main`) can count instructions for one workload:
//
//   swift build -c release --product AsyncCoreProfile
//   valgrind --tool=callgrind .build/release/AsyncCoreProfile dispatch-1-observer
//   callgrind_annotate callgrind.out.<pid> | head -40
//
// Instruction counts repeat to ±0.01% where wall-clock figures move ±20%,
// so this is how a change to a hot path is judged before the benchmark.
// Foundation only for the semaphore the synchronous main blocks on.
import AsyncCore
import Foundation
import Synchronization

struct ProfileState: Sendable {
  var count = 0
  var padding = (0, 0, 0, 0, 0)
}

@inline(never)
func reduceProfile(_ state: inout ProfileState, _ amount: Int) {
  state.count &+= amount
}

enum Workload: String, CaseIterable {
  case send
  case dispatch
  case dispatch1Observer = "dispatch-1-observer"
  case dispatch100Observers = "dispatch-100-observers"
  case dispatch1Subscriber = "dispatch-1-subscriber"
  case dispatch100Subscribers = "dispatch-100-subscribers"
  /// `dispatch` through one middleware that passes every action.
  case dispatch1Middleware = "dispatch-1-middleware"
  case effects
  case unchanged1000Observers = "unchanged-1000-observers"
  case fanOut1000 = "fan-out-1000"
  case fanOutCell1000 = "fan-out-cell-1000"
  /// The two above with their consumers on a dedicated-thread task executor.
  case fanOutExecutor1000 = "fan-out-executor-1000"
  case fanOutCellExecutor1000 = "fan-out-cell-executor-1000"
  /// `send` of actions for the middle row of a `forEach` over 5,000 rows,
  /// as the benchmark's *Composed reducers* table measures it.
  case forEachRow = "for-each-row"
  /// `try await core.enqueue` from one producer into an unbounded mailbox,
  /// where it never waits: the cost of its fast path against `send`.
  case enqueue
  /// The same into a mailbox of capacity 4,096: the producer waits whenever
  /// it is full.
  case enqueue4096 = "enqueue-4096"
  /// 8 producers flooding `send` (ACTIONS in all), then `await core.state`:
  /// the benchmark's *send throughput under a flood*, with the fair drain
  /// and with the drain's slice set to `Int.max`.
  case floodFair = "flood-fair"
  case floodUnsliced = "flood-unsliced"
  /// 8 producers `enqueue` (ACTIONS in all) into a mailbox of capacity 64
  /// or 4,096, then `await core.state`; prints the core's metrics every
  /// 100 ms while the flood runs past 200 ms (to see a stall from inside).
  case floodEnqueue64 = "flood-enqueue-64"
  case floodEnqueue4096 = "flood-enqueue-4096"
  /// A durable core over a journal that keeps nothing (DurableWorkloads.swift):
  /// `dispatch` from one task, or `send` then `sync()`.
  case durableDispatch = "durable-dispatch"
  case durableSend = "durable-send"
  /// One `dispatch` to each of ACTIONS ids (EntityWorkloads.swift): an
  /// in-memory `Entities`, or a dictionary of cores made by hand.
  case entitiesDispatch = "entities-dispatch"
  case entitiesByHand = "entities-by-hand"

  /// Runs the workload on a detached task, never on the main actor.
  func run(actions: Int) async {
    if self == .fanOutCell1000 {
      await runSharedCell(rounds: actions)
      return
    }
    if self == .fanOutExecutor1000 {
      await runCoreOnExecutor(rounds: actions)
      return
    }
    if self == .fanOutCellExecutor1000 {
      await runSharedCellOnExecutor(rounds: actions)
      return
    }
    if self == .floodEnqueue64 || self == .floodEnqueue4096 {
      await runEnqueueFlood(actions: actions, capacity: self == .floodEnqueue64 ? 64 : 4_096)
      return
    }
    if self == .floodFair || self == .floodUnsliced {
      await runFlood(actions: actions, sliced: self == .floodFair)
      return
    }
    if self == .durableDispatch || self == .durableSend {
      await runDurable(actions: actions, sending: self == .durableSend)
      return
    }
    if self == .entitiesDispatch || self == .entitiesByHand {
      await runEntities(ids: actions, byHand: self == .entitiesByHand)
      return
    }
    if self == .forEachRow {
      await runForEachRow(actions: actions)
      return
    }
    let capacity = self == .enqueue4096 ? 4_096 : nil
    let core = Core<ProfileState, Int>(initialState: ProfileState(), mailboxCapacity: capacity) { state, amount in
      reduceProfile(&state, amount)
      guard amount < 0 else { return .none }
      return .run { _ in }
    }
    var loops: [Task<Void, Never>] = []
    let arrivals = Arrivals()
    var subscribers: [Subscriber] = []
    switch self {
    case .dispatch1Observer, .dispatch100Observers:
      for _ in 0..<(self == .dispatch1Observer ? 1 : 100) {
        let counts = await core.observe(\.count)
        loops.append(Task.detached { for await count in counts where count >= actions { return } })
      }
    case .dispatch1Subscriber, .dispatch100Subscribers:
      for _ in 0..<(self == .dispatch1Subscriber ? 1 : 100) {
        subscribers.append(await core.subscribe(to: \.count) { _ in })
      }
    case .fanOut1000:
      // One key path: the observers share a cell. Each round waits until
      // every consumer holds the round's count (ACTIONS rounds).
      for _ in 0..<1_000 {
        let counts = await core.observe(\.count)
        loops.append(Task.detached { for await count in counts { arrivals.arrive(count) } })
      }
    case .dispatch1Middleware:
      await core.addMiddleware { _, _, _ in .pass }
    case .unchanged1000Observers:
      // Closure selectors: each observer evaluates its own.
      for _ in 0..<1_000 {
        let stream = await core.observe { $0.padding.0 }
        loops.append(Task.detached { for await _ in stream {} })
      }
    default:
      break
    }
    do {
      switch self {
      case .send:
        for _ in 0..<actions { core.send(1) }
        _ = await core.state
      case .enqueue, .enqueue4096:
        for _ in 0..<actions { try await core.enqueue(1) }
        _ = await core.state
      case .unchanged1000Observers:
        for _ in 0..<actions {
          try await core.dispatch(1)
          _ = await core.state
        }
      case .fanOut1000:
        for round in 1...actions {
          arrivals.expect(round, from: 1_000)
          try await core.dispatch(1)
          await arrivals.wait()
        }
      case .effects:
        for _ in 0..<actions { try await core.dispatch(-1) }
        try await core.waitUntilIdle()
      default:
        for _ in 0..<actions { try await core.dispatch(1) }
      }
    } catch {
      fatalError("The profile's core refused an action: \(error)")
    }
    withExtendedLifetime(subscribers) {}
    await core.shutdown()  // ends the loops after their final value
    for loop in loops { await loop.value }
  }
}

/// How many consumers hold a round's value; wakes the round's waiter when
/// all do.
final class Arrivals: Sendable {
  private struct Round {
    var target = 0
    var expected = 0
    var arrived = 0
    var waiter: CheckedContinuation<Void, Never>?
  }
  private let round = Mutex(Round())

  func expect(_ target: Int, from expected: Int) {
    round.withLock { $0 = Round(target: target, expected: expected) }
  }

  func arrive(_ value: Int) {
    let waiter = round.withLock { round -> CheckedContinuation<Void, Never>? in
      guard value == round.target else { return nil }
      round.arrived += 1
      guard round.arrived == round.expected else { return nil }
      defer { round.waiter = nil }
      return round.waiter
    }
    waiter?.resume()
  }

  func wait() async {
    await withCheckedContinuation { continuation in
      let done = round.withLock { round -> Bool in
        guard round.arrived < round.expected else { return true }
        round.waiter = continuation
        return false
      }
      if done { continuation.resume() }
    }
  }
}

/// The benchmark's shared latest-value cell (Sources/AsyncCoreBenchmarks/Baselines.swift)
/// in small, as the instruction count `fan-out-1000` is compared with.
final class Cell: Sendable {
  private struct State {
    var count = 0
    var version = 0
    var waiters: [UnsafeContinuation<(Int, Int)?, Never>] = []
    var isFinished = false
  }
  private let state = Mutex(State())

  func increment() {
    let (waiters, count, version) = state.withLock { state in
      state.count += 1
      state.version += 1
      defer { state.waiters = [] }
      return (state.waiters, state.count, state.version)
    }
    for waiter in waiters { waiter.resume(returning: (count, version)) }
  }

  func next(after version: Int) async -> (Int, Int)? {
    await withUnsafeContinuation { continuation in
      let ready: (Int, Int)?? = state.withLock { state in
        if state.version > version { return .some((state.count, state.version)) }
        if state.isFinished { return .some(nil) }
        state.waiters.append(continuation)
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  func finish() {
    let waiters = state.withLock { state in
      state.isFinished = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume(returning: nil) }
  }
}

func runSharedCell(rounds: Int) async {
  let cell = Cell()
  let arrivals = Arrivals()
  var loops: [Task<Void, Never>] = []
  for _ in 0..<1_000 {
    loops.append(
      Task.detached {
        var version = 0
        while let (count, newVersion) = await cell.next(after: version) {
          version = newVersion
          arrivals.arrive(count)
        }
      })
  }
  for round in 1...rounds {
    arrivals.expect(round, from: 1_000)
    cell.increment()
    await arrivals.wait()
  }
  cell.finish()
  for loop in loops { await loop.value }
}

/// The benchmark's *Composed reducers* state and actions, in small.
struct Rows: Sendable {
  struct Row: Sendable, Identifiable {
    let id: Int
    var count = 0
  }
  struct Child: Sendable {
    var count = 0
  }
  var rows = (0..<5_000).map { Row(id: $0) }
  var child = Child()
  var detail: Child? = Child()
  var other = 0
}

enum RowsAction: Sendable {
  case other
  case row(id: Int, action: RowAction)
  case child(RowAction)

  enum RowAction: Sendable {
    case increment
  }
}

func runForEachRow(actions: Int) async {
  let rowCase = ActionCase(embed: RowsAction.row) {
    if case .row(let id, let action) = $0 { (id, action) } else { nil }
  }
  let row = Reduce<Rows.Row, RowsAction.RowAction> { row, _ in row.count &+= 1 }
  let parent = Reduce<Rows, RowsAction> { state, action in
    if case .other = action { state.other &+= 1 }
  }
  let core = Core(initialState: Rows(), reducer: parent.forEach(\.rows, action: rowCase, element: row))
  let action = RowsAction.row(id: 2_500, action: .increment)
  do {
    for _ in 0..<actions - 1 { core.send(action) }
    try await core.dispatch(action)
  } catch {
    fatalError("The profile's core refused an action: \(error)")
  }
  await core.shutdown()
}

let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first, let workload = Workload(rawValue: name) else {
  print("Usage: AsyncCoreProfile WORKLOAD [ACTIONS]")
  print("Workloads: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")); 200000 actions by default.")
  exit(2)
}
let actions = arguments.dropFirst().first.flatMap { Int($0) } ?? 200_000
let finished = DispatchSemaphore(value: 0)
Task.detached {
  await workload.run(actions: actions)
  finished.signal()
}
finished.wait()

/// 8 producers send `actions / 8` each, back to back; then the state is
/// read, and checked.
func runFlood(actions: Int, sliced: Bool) async {
  // A pure reducer, as the benchmark's: the drain's fast path.
  let core = Core<ProfileState, Int>(initialState: ProfileState(), reducer: Reduce(reduceProfile))
  if !sliced { await core.setDrainSliceForBenchmarks(Int.max) }
  let perProducer = actions / 8
  await withDiscardingTaskGroup { group in
    for _ in 0..<8 {
      group.addTask {
        for _ in 0..<perProducer { core.send(1) }
      }
    }
  }
  let count = await core.state.count
  if count != perProducer * 8 { fatalError("\(perProducer * 8) sent, \(count) reduced") }
  await core.shutdown()
}

/// 8 producers enqueue `actions / 8` each into a mailbox of `capacity`;
/// then the state is read, and checked. A watcher prints the core's
/// metrics every 100 ms once the flood has run 200 ms.
func runEnqueueFlood(actions: Int, capacity: Int) async {
  let core = Core<ProfileState, Int>(
    initialState: ProfileState(), mailboxCapacity: capacity, reducer: Reduce(reduceProfile))
  let perProducer = actions / 8
  let start = ContinuousClock.now
  let watcher = Task.detached {
    try? await Task.sleep(for: .milliseconds(200))
    while !Task.isCancelled {
      let metrics = core.metrics
      print(
        "at \(ContinuousClock.now - start): depth \(metrics.queueDepth), reduced \(metrics.actionsReduced), "
          + "waiting \(metrics.waitingSenders), slices \(metrics.drainSlices)")
      try? await Task.sleep(for: .milliseconds(100))
    }
  }
  await withDiscardingTaskGroup { group in
    for _ in 0..<8 {
      group.addTask {
        for _ in 0..<perProducer {
          do { try await core.enqueue(1) } catch { fatalError("refused: \(error)") }
        }
      }
    }
  }
  let count = await core.state.count
  watcher.cancel()
  if count != perProducer * 8 { fatalError("\(perProducer * 8) enqueued, \(count) reduced") }
  await core.shutdown()
}
