import AsyncCore
import AsyncCoreExecutorExperiment

// `fan-out-1000` and `fan-out-cell-1000` with their 1,000 consumers on a
// dedicated-thread task executor instead of the global one: the instruction
// count per wake of each, beside the same workload on the global executor.
// Valgrind runs one thread at a time, so the count covers the publisher,
// the executor's thread and the consumers alike.

/// 1,000 `for await` observers of a core, consuming on `DedicatedThreadExecutor`.
func runCoreOnExecutor(rounds: Int) async {
  let executor = DedicatedThreadExecutor()
  let core = Core<ProfileState, Int>(initialState: ProfileState()) { state, amount in
    reduceProfile(&state, amount)
    return .none
  }
  let arrivals = Arrivals()
  var loops: [Task<Void, Never>] = []
  for _ in 0..<1_000 {
    let counts = await core.observe(\.count)
    loops.append(Task.detached(executorPreference: executor) { for await count in counts { arrivals.arrive(count) } })
  }
  do {
    for round in 1...rounds {
      arrivals.expect(round, from: 1_000)
      try await core.dispatch(1)
      await arrivals.wait()
    }
  } catch {
    fatalError("The profile's core refused an action: \(error)")
  }
  await core.shutdown()
  for loop in loops { await loop.value }
  executor.shutdown()
}

/// 1,000 consumers of the shared cell, on `DedicatedThreadExecutor`.
func runSharedCellOnExecutor(rounds: Int) async {
  let executor = DedicatedThreadExecutor()
  let cell = Cell()
  let arrivals = Arrivals()
  var loops: [Task<Void, Never>] = []
  for _ in 0..<1_000 {
    loops.append(
      Task.detached(executorPreference: executor) {
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
  executor.shutdown()
}
