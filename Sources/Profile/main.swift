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
  case effects
  case unchanged1000Observers = "unchanged-1000-observers"

  /// Runs the workload on a detached task, never on the main actor.
  func run(actions: Int) async {
    let core = Core<ProfileState, Int>(initialState: ProfileState()) { state, amount in
      reduceProfile(&state, amount)
      guard amount < 0 else { return .none }
      return .run { _ in }
    }
    var loops: [Task<Void, Never>] = []
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
      case .unchanged1000Observers:
        for _ in 0..<actions {
          try await core.dispatch(1)
          _ = await core.state
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
