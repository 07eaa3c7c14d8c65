import AsyncCore
import Synchronization

// The entities family's throughput rows for callgrind: one `dispatch` to
// each of ACTIONS distinct ids from one task (`entities-dispatch`), or to
// cores by id in a `Mutex`-guarded dictionary, each made on first use
// (`entities-by-hand`): what the registry adds per new entity.

/// One `dispatch` to each of `ids` ids, through an in-memory `Entities`
/// registry or a dictionary of cores by hand; then every core shut down.
func runEntities(ids: Int, byHand: Bool) async {
  let start = ContinuousClock.now
  do {
    if byHand {
      let cores = Mutex<[Int: Core<ProfileState, Int>]>([:])
      for id in 0..<ids {
        let core = cores.withLock { cores in
          if let core = cores[id] { return core }
          let core = Core<ProfileState, Int>(initialState: ProfileState(), reducer: Reduce(reduceProfile))
          cores[id] = core
          return core
        }
        try await core.dispatch(1)
      }
      print("by hand: dispatched at \(ContinuousClock.now - start)")
      for core in cores.withLock({ Array($0.values) }) { await core.shutdown() }
      print("by hand: shut down at \(ContinuousClock.now - start)")
    } else {
      let entities = Entities<Int, ProfileState, Int>(
        initialState: { _ in ProfileState() }, reducer: Reduce(reduceProfile))
      for id in 0..<ids { try await entities.dispatch(1, to: id) }
      print("entities: dispatched at \(ContinuousClock.now - start)")
      await entities.shutdown()
      print("entities: shut down at \(ContinuousClock.now - start)")
    }
  } catch {
    fatalError("The profile's entity refused an action: \(error)")
  }
}
