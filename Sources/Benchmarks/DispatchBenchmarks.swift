import AsyncCore
import Synchronization

/// Dispatch throughput, one producer: AsyncCore's `send` and `await dispatch`
/// with 0 and 1 observers, beside the baselines measured in the same rounds.
func dispatchThroughput(options: Options) async -> [ThroughputResult] {
  let actions = options.quick ? 200_000 : 1_000_000
  // Designs that wake a task per action run a tenth as many; each figure is
  // a rate, so the counts need not match.
  let slowActions = actions / 10

  let contenders: [Contender] = [
    .baseline("raw reducer loop (the limit)") {
      await measure(operations: actions) {
        var state = BenchState()
        for _ in 0..<actions { benchReduce(&state, .increment) }
        blackHole(state)
      }
    },
    .baseline("Mutex store, 0 callbacks") {
      let store = MutexStore()
      return await measure(operations: actions) {
        for _ in 0..<actions { store.dispatch(.increment) }
      }
    },
    .baseline("Mutex store, 1 callback (every state)") {
      let latest = LatestCount()
      let store = MutexStore(callbacks: [{ latest.store($0.count) }])
      return await measure(operations: actions) {
        for _ in 0..<actions { store.dispatch(.increment) }
      }
    },
    .baseline("plain actor, await dispatch, 0 observers") {
      let store = PlainActorStore()
      return await measure(operations: actions) {
        for _ in 0..<actions { await store.dispatch(.increment) }
      }
    },
    .baseline("plain actor, await dispatch, 1 AsyncStream observer") {
      let store = PlainActorStore()
      let consumer = consume(await store.states(), until: slowActions)
      let sample = await measure(operations: slowActions) {
        for _ in 0..<slowActions { await store.dispatch(.increment) }
        await consumer.value
      }
      await store.finish()
      return sample
    },
    .core("Core send, 0 observers") {
      let core = makeBenchCore()
      return await measure(operations: actions) {
        for _ in 0..<actions { core.send(.increment) }
        blackHole(await core.state)
      }
    },
    .core("Core await dispatch, 0 observers") {
      let core = makeBenchCore()
      return await measure(operations: actions) {
        for _ in 0..<actions { await dispatch(.increment, to: core) }
      }
    },
    .core("Core send, 1 latest observer") {
      let core = makeBenchCore()
      let consumer = consume(await core.observe(\.count), until: actions)
      return await measure(operations: actions) {
        for _ in 0..<actions { core.send(.increment) }
        await consumer.value
      }
    },
    .core("Core await dispatch, 1 latest observer") {
      let core = makeBenchCore()
      let consumer = consume(await core.observe(\.count), until: actions)
      return await measure(operations: actions) {
        for _ in 0..<actions { await dispatch(.increment, to: core) }
        await consumer.value
      }
    },
  ]
  return await runInterleaved(contenders, rounds: options.rounds)
}

func makeBenchCore() -> Core<BenchState, BenchAction> {
  Core(initialState: BenchState(), reducer: benchReduce)
}

/// `await core.dispatch(action)` for a core the benchmark never shuts down.
func dispatch(_ action: BenchAction, to core: Core<BenchState, BenchAction>) async {
  do {
    try await core.dispatch(action)
  } catch {
    fatalError("The benchmark's core refused an action: \(error)")
  }
}

/// Consumes counts until one reaches `target`.
func consume(_ counts: CoreStream<Int>, until target: Int) -> Task<Void, Never> {
  Task.detached {
    for await count in counts where count >= target { return }
    fatalError("The observer ended before the final state \(target)")
  }
}

/// Consumes states until the count reaches `target`.
func consume(_ states: AsyncStream<BenchState>, until target: Int) -> Task<Void, Never> {
  Task.detached {
    for await state in states where state.count >= target { return }
    fatalError("The observer ended before the final state \(target)")
  }
}

/// What a synchronous callback does with each state: keep the newest count.
final class LatestCount: Sendable {
  private let count = Atomic<Int>(0)
  func store(_ value: Int) { count.store(value, ordering: .relaxed) }
}
