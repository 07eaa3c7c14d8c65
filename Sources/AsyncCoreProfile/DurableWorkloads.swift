import AsyncCore

// A durable core for callgrind: a journal of the profile's own that keeps
// nothing and never waits, so that the instructions counted are the core's
// durable path (staging, the journaled drain, the turns, resuming
// dispatchers) without a file, a codec or a queue.

final class DiscardingJournal: CoreJournal {
  typealias State = ProfileState
  typealias Action = Int

  var syncInterval: Duration? { nil }
  func recoverState() async throws -> ProfileState? { nil }
  func recoverActions() async throws -> [Int]? { nil }
  func encode(_ action: Int) throws -> [UInt8] { [] }
  func append(_ records: [[UInt8]]) async throws -> Bool { false }
  func snapshot(_ state: ProfileState) async throws {}
  func sync() async throws {}
  func close() async {}
}

/// `try await core.dispatch` from one task (`durable-dispatch`), or `send`
/// of every action then `try await core.sync()` (`durable-send`), on a
/// durable core over a ``DiscardingJournal``.
func runDurable(actions: Int, sending: Bool) async {
  do {
    let core = try await Core(
      initialState: ProfileState(), journal: DiscardingJournal(), reducer: Reduce(reduceProfile))
    if sending {
      for _ in 0..<actions { core.send(1) }
      try await core.sync()
    } else {
      for _ in 0..<actions { try await core.dispatch(1) }
    }
    await core.shutdown()
  } catch {
    fatalError("The profile's durable core refused an action: \(error)")
  }
}
