import AsyncCore
import AsyncCoreJournal
import Testing

/// A state whose checksum depends on the order actions were reduced in.
struct Ledger: Codable, Sendable, Equatable {
  var count = 0
  var checksum = 0
  var bonuses = 0
  var echoes = 0
}

enum LedgerAction: Codable, Sendable {
  case add(producer: Int, index: Int)
  case bonus(producer: Int)
  case echo
}

/// Every hundredth `add` starts a `.send(.echo)` (reduced with it, not
/// journaled) and a `.run` that sends `.bonus` back (journaled as any action).
let ledgerReducer = Reduce<Ledger, LedgerAction> { state, action in
  switch action {
  case .add(let producer, let index):
    state.count += 1
    state.checksum = state.checksum &* 31 &+ (producer * 10_000 + index)
    if index % 100 == 0 {
      return .merge([.send(.echo), .run { send in await send(.bonus(producer: producer)) }])
    }
  case .bonus(let producer):
    state.bonuses += 1
    state.checksum = state.checksum &* 31 &+ producer
  case .echo:
    state.echoes += 1
  }
  return .none
}

@Suite("A core on a journal", .timeLimit(.minutes(2)))
struct CoreJournalTests {
  @Test("4 producers dispatch 1,000 actions each; a core reopened on the journal recovers the same state")
  func reopenedCoreRecoversTheState() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (core, journal) = try await Core.journaled(
      directory: scratch.journal, durability: .everyAction, initialState: Ledger(), reducer: ledgerReducer)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for producer in 0..<4 {
        group.addTask {
          for index in 0..<1_000 {
            let handle = try await core.dispatchJournaled(.add(producer: producer, index: index))
            if index % 100 == 0 { try await handle.finish() }
          }
        }
      }
      try await group.waitForAll()
    }
    let final = await core.state
    #expect(final.count == 4_000)
    #expect(final.bonuses == 40)
    #expect(final.echoes == 40)
    let slices = core.metrics.drainSlices
    journal.close()

    let (reopened, second) = try await Core.journaled(
      directory: scratch.journal, durability: .everyAction, initialState: Ledger(), reducer: ledgerReducer)
    #expect(await reopened.state == final)
    second.close()
    // Group commit: fewer appends than actions (printed for the report).
    print("journaled core: 4,040 actions in \(slices) slices")
  }
}
