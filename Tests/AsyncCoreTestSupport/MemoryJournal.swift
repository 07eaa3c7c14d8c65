import AsyncCore
import Synchronization

/// A journal in memory, for tests of durable cores without a disk: it keeps
/// the actions it was handed (their records are one byte each), counts its
/// calls, and fails or refuses on request. ``reopened()`` gives what a
/// restart would find.
package final class MemoryJournal<State: Sendable, Action: Sendable>: CoreJournal {
  package struct Contents: Sendable {
    package var snapshot: State?
    /// The actions after the snapshot, appended and durable.
    package var actions: [Action] = []
    /// Every action ever appended, for tests that check the whole log.
    package var log: [Action] = []
    package var staged: [Action] = []
    package var appends = 0
    package var syncs = 0
    package var snapshots = 0
    package var closed = false
    package var recoveredBatches = 0
    var handedBack = false
  }

  package let contents: Mutex<Contents>
  package let syncInterval: Duration?
  let snapshotEvery: Int?
  let refuse: @Sendable (Action) -> Bool
  let failAppend: Mutex<(any Error)?> = Mutex(nil)
  /// Yields the number of syncs after each one.
  package let syncSignal: AsyncStream<Int>
  let syncContinuation: AsyncStream<Int>.Continuation

  package struct Refused: Error, Equatable {
    package init() {}
  }

  /// From the `failFrom`th append on (1 is the first), appends throw.
  let failFrom: Int?

  package init(
    syncInterval: Duration? = nil, snapshotEvery: Int? = nil, failFrom: Int? = nil, contents: Contents = Contents(),
    refuse: @escaping @Sendable (Action) -> Bool = { _ in false }
  ) {
    self.syncInterval = syncInterval
    self.snapshotEvery = snapshotEvery
    self.failFrom = failFrom
    self.refuse = refuse
    var fresh = contents
    fresh.handedBack = false
    fresh.closed = false
    self.contents = Mutex(fresh)
    (syncSignal, syncContinuation) = AsyncStream.makeStream()
  }

  /// A journal holding what this one made durable, as after a restart.
  package func reopened() -> MemoryJournal {
    var durable = contents.withLock { $0 }
    durable.staged = []
    durable.appends = 0
    durable.syncs = 0
    durable.snapshots = 0
    durable.recoveredBatches = 0
    return MemoryJournal(syncInterval: syncInterval, snapshotEvery: snapshotEvery, contents: durable, refuse: refuse)
  }

  /// The next append throws `error`.
  package func failNextAppend(with error: any Error) {
    failAppend.withLock { $0 = error }
  }

  package var log: [Action] { contents.withLock { $0.log } }

  package func recoverState() async throws -> State? {
    contents.withLock { $0.snapshot }
  }

  package func recoverActions() async throws -> [Action]? {
    contents.withLock { contents in
      guard !contents.handedBack else { return nil }
      contents.handedBack = true
      contents.recoveredBatches += 1
      return contents.actions
    }
  }

  package func encode(_ action: Action) throws -> [UInt8] {
    if refuse(action) { throw Refused() }
    contents.withLock { $0.staged.append(action) }
    return [0]
  }

  package func append(_ records: [[UInt8]]) async throws -> Bool {
    await withCheckedContinuation { $0.resume() }
    if let failFrom, contents.withLock({ $0.appends + 1 >= failFrom }) {
      contents.withLock { $0.appends += 1 }
      throw Refused()
    }
    if let error = failAppend.withLock({ error in
      defer { error = nil }
      return error
    }) {
      throw error
    }
    return contents.withLock { contents in
      precondition(records.count == contents.staged.count, "MemoryJournal: records and staged actions differ")
      contents.actions += contents.staged
      contents.log += contents.staged
      contents.staged = []
      contents.appends += 1
      guard let snapshotEvery else { return false }
      return contents.actions.count >= snapshotEvery
    }
  }

  package func snapshot(_ state: State) async throws {
    contents.withLock { contents in
      contents.snapshot = state
      contents.actions = []
      contents.snapshots += 1
    }
  }

  package func sync() async throws {
    let count = contents.withLock { contents in
      contents.syncs += 1
      return contents.syncs
    }
    syncContinuation.yield(count)
  }

  package func close() async {
    contents.withLock { $0.closed = true }
    syncContinuation.finish()
  }
}
