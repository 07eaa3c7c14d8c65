import AsyncCore
import Dispatch

// A spike of issue 22's core integration: a core made on a journal. Not API
// yet (`package`): the next session decides its public shape.

extension Core where State: Codable, Action: Codable {
  /// Opens the journal in `directory`, recovers the state (the newest valid
  /// snapshot, or `initialState`, then the records after it reduced with
  /// effects discarded), and returns a core that appends every action to the
  /// journal before reducing it, with the journal (to close).
  package static func journaled(
    directory: String,
    schemaVersion: Int = 1,
    durability: JournalDurability,
    codec: some JournalCodec = JSONJournalCodec(),
    initialState: State,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    reducer: Reduce<State, Action>
  ) async throws -> (core: Core, journal: Journal) {
    let identity = JournalIdentity(action: Action.self, state: State.self, schemaVersion: schemaVersion)
    let (journal, recovered) = try Journal.open(directory: directory, identity: identity, durability: durability)
    for damage in recovered.damage {
      diagnostics(EffectFailure(error: JournalDamageFound(damage: damage), fileID: #fileID, line: #line))
    }
    let state = try recovered.snapshot.map { try codec.decode(State.self, from: $0.state) } ?? initialState
    let actions = try recovered.records.map { try codec.decode(Action.self, from: $0.body) }
    let core = Core(initialState: state, diagnostics: diagnostics, reducer: reducer)
    await core.replayJournal(actions)
    // One serial queue per journal: the drain awaits each append before the
    // next, so the record order is the reduction order; the fdatasync blocks
    // this queue's thread, never the core nor the cooperative pool.
    let queue = DispatchQueue(label: "AsyncCoreJournal.append")
    await core.attachJournal(
      CoreJournalHook { actions in
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
          queue.async {
            do {
              let bodies = try actions.map { try codec.encode($0) }
              try journal.append(bodies)
              continuation.resume()
            } catch {
              continuation.resume(throwing: error)
            }
          }
        }
      })
    return (core, journal)
  }
}

/// Damage recovery moved aside, as the diagnostics handler receives it
/// (spike: the real thing is a `CoreDiagnostic` case or a journal one).
package struct JournalDamageFound: Error, Sendable {
  package let damage: JournalDamage
}
