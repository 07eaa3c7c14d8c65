import AsyncCore
import Synchronization

/// An entity store in memory, for tests of `Entities` without a disk: each
/// id's snapshot and the actions after it, what each journal call did,
/// and faults on request (an id that cannot be read, snapshots that fail,
/// reads held until the test lets them go).
package final class MemoryEntityStore<ID: Hashable & Sendable, State: Sendable, Action: Sendable>: EntityStore {
  package struct Stored: Sendable {
    package var snapshot: State?
    package var actions: [Action] = []
    /// Every action ever appended, in order.
    package var log: [Action] = []

    package init(snapshot: State? = nil, actions: [Action] = []) {
      self.snapshot = snapshot
      self.actions = actions
      self.log = actions
    }
  }

  package struct Contents: Sendable {
    package var stored: [ID: Stored] = [:]
    package var open: Set<ID> = []
    package var opened = 0
    package var snapshots = 0
    package var syncs = 0
    package var closed = false
    package var unreadable: Set<ID> = []
    package var failingSnapshots = false
    package var heldReads = false
    var readWaiters: [CheckedContinuation<Void, Never>] = []
    package var heldSnapshots = false
    var snapshotWaiters: [CheckedContinuation<Void, Never>] = []
  }

  package struct Unreadable: Error, Equatable {
    package init() {}
  }

  package struct SnapshotFailed: Error, Equatable {
    package init() {}
  }

  package let contents = Locked(Contents())
  package let syncInterval: Duration?
  /// Yields each id whose read began, and each id whose snapshot began.
  package let reads: AsyncStream<ID>
  package let snapshotsBegun: AsyncStream<ID>
  let readsContinuation: AsyncStream<ID>.Continuation
  let snapshotsContinuation: AsyncStream<ID>.Continuation

  package init(syncInterval: Duration? = nil) {
    self.syncInterval = syncInterval
    (reads, readsContinuation) = AsyncStream.makeStream()
    (snapshotsBegun, snapshotsContinuation) = AsyncStream.makeStream()
  }

  /// Snapshots wait until ``releaseSnapshots()``.
  package func holdSnapshots() { contents.withLock { $0.heldSnapshots = true } }

  package func releaseSnapshots() {
    let waiters = contents.withLock { contents in
      contents.heldSnapshots = false
      defer { contents.snapshotWaiters = [] }
      return contents.snapshotWaiters
    }
    for waiter in waiters { waiter.resume() }
  }

  package func stored(_ id: ID) -> Stored? { contents.withLock { $0.stored[id] } }

  /// Reads wait until ``releaseReads()``.
  package func holdReads() { contents.withLock { $0.heldReads = true } }

  package func releaseReads() {
    let waiters = contents.withLock { contents in
      contents.heldReads = false
      defer { contents.readWaiters = [] }
      return contents.readWaiters
    }
    for waiter in waiters { waiter.resume() }
  }

  package func journal(for id: ID) async throws -> any CoreJournal<State, Action> {
    readsContinuation.yield(id)
    await withCheckedContinuation { continuation in
      let wait = contents.withLock { contents in
        if contents.heldReads { contents.readWaiters.append(continuation) }
        return contents.heldReads
      }
      if !wait { continuation.resume() }
    }
    let stored = contents.withLock { contents -> Stored? in
      precondition(!contents.closed, "MemoryEntityStore: a journal opened after close")
      if contents.unreadable.contains(id) { return nil }
      precondition(contents.open.insert(id).inserted, "MemoryEntityStore: two journals open for \(id)")
      contents.opened += 1
      return contents.stored[id] ?? Stored()
    }
    guard let stored else { throw Unreadable() }
    return Journal(store: self, id: id, stored: stored)
  }

  package func sync() async throws {
    contents.withLock { $0.syncs += 1 }
  }

  package func close() async {
    contents.withLock { contents in
      precondition(contents.open.isEmpty, "MemoryEntityStore: closed with journals open: \(contents.open)")
      contents.closed = true
    }
  }

  final class Journal: CoreJournal {
    let store: MemoryEntityStore
    let id: ID
    let recovered: Stored
    let handedBack = Atomic(false)
    let staged = Locked<[Action]>([])

    init(store: MemoryEntityStore, id: ID, stored: Stored) {
      self.store = store
      self.id = id
      self.recovered = stored
    }

    var syncInterval: Duration? { nil }

    func recoverState() async throws -> State? { recovered.snapshot }

    func recoverActions() async throws -> [Action]? {
      handedBack.exchange(true, ordering: .relaxed) ? nil : recovered.actions
    }

    func encode(_ action: Action) throws -> [UInt8] {
      staged.withLock { $0.append(action) }
      return [0]
    }

    func append(_ records: [[UInt8]]) async throws -> Bool {
      let actions = staged.withLock { staged in
        defer { staged = [] }
        return staged
      }
      precondition(actions.count == records.count, "MemoryEntityStore: records and staged actions differ")
      store.contents.withLock { contents in
        contents.stored[id, default: Stored()].actions += actions
        contents.stored[id, default: Stored()].log += actions
      }
      return false
    }

    func snapshot(_ state: State) async throws {
      store.snapshotsContinuation.yield(id)
      await withCheckedContinuation { continuation in
        let wait = store.contents.withLock { contents in
          if contents.heldSnapshots { contents.snapshotWaiters.append(continuation) }
          return contents.heldSnapshots
        }
        if !wait { continuation.resume() }
      }
      let stored = store.contents.withLock { contents -> Bool in
        if contents.failingSnapshots { return false }
        contents.stored[id, default: Stored()].snapshot = state
        contents.stored[id, default: Stored()].actions = []
        contents.snapshots += 1
        return true
      }
      if !stored { throw SnapshotFailed() }
    }

    func sync() async throws {}

    func close() async {
      store.contents.withLock { contents in
        precondition(contents.open.remove(id) != nil, "MemoryEntityStore: \(id) closed twice")
      }
    }
  }
}
