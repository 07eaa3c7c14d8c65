/// One entity's journal in a store, as a pure state machine: the recovery
/// its core has not taken yet, where the next record goes, and when a
/// snapshot is due.
///
/// AsyncCoreSQLite's and AsyncCorePostgres's journals keep one under a lock
/// and do the writing its methods call for.
package struct EntityJournalProgress<State: Sendable, Action: Sendable>: Sendable {
  /// The most actions ``takeActions()`` hands over at once.
  package static var batch: Int { 4_096 }

  private var state: State?
  private var stateTaken = false
  /// What ``takeActions()`` has not handed over yet.
  private var actions: [Action]
  /// The next record's sequence number.
  package private(set) var next: UInt64
  private var snapshotSequence: UInt64
  private var sinceSnapshot: Int
  /// How many records make a snapshot due.
  private let snapshotEvery: Int
  package private(set) var closed = false

  /// - Parameters:
  ///   - last: the sequence number of the last record or snapshot stored.
  ///   - snapshotSequence: the snapshot's sequence number, or 0 for none.
  ///   - snapshotEvery: how many records make a snapshot due.
  package init(state: State?, actions: [Action], last: UInt64, snapshotSequence: UInt64, snapshotEvery: Int) {
    self.state = state
    self.actions = actions
    next = last + 1
    self.snapshotSequence = snapshotSequence
    sinceSnapshot = actions.count
    self.snapshotEvery = snapshotEvery
  }

  /// The recovered state, or `.none` when it was taken already (a second
  /// `recoverState()`, which the journal traps on).
  package mutating func takeState() -> State?? {
    guard !stateTaken else { return .none }
    stateTaken = true
    defer { state = nil }
    return .some(state)
  }

  /// The next batch of recovered actions, `nil` when none are left.
  package mutating func takeActions() -> [Action]? {
    stateTaken = true
    guard !actions.isEmpty else { return nil }
    guard actions.count > Self.batch else {
      defer { actions = [] }  // handed over whole: no copy
      return actions
    }
    let batch = Array(actions[..<Self.batch])
    actions.removeFirst(Self.batch)
    return batch
  }

  /// Records `count` records stored from `first`; whether a snapshot is due.
  package mutating func appended(first: UInt64, count: Int) -> Bool {
    next = first + UInt64(count)
    sinceSnapshot += count
    return sinceSnapshot >= snapshotEvery
  }

  /// A snapshot begins: the sequence number it stands at, and whether it
  /// is needed (something was stored since the last one); `nil` once
  /// closed. The count restarts first, so a failed snapshot is not retried
  /// at every append.
  package mutating func snapshotBegins() -> (last: UInt64, due: Bool)? {
    sinceSnapshot = 0
    guard !closed else { return nil }
    return (next - 1, next - 1 > snapshotSequence)
  }

  /// A snapshot at `last` is stored.
  package mutating func snapshotStored(at last: UInt64) {
    snapshotSequence = max(snapshotSequence, last)
  }

  /// Closes the journal; whether this was the first close.
  package mutating func close() -> Bool {
    defer { closed = true }
    return !closed
  }
}

extension JournalCodec {
  /// The bytes of `value`, or the store's own error for a value the codec
  /// cannot encode.
  package func encode<Value: Encodable, Failure: Error>(
    _ value: Value, or failure: (_ description: String) -> Failure
  ) throws(Failure) -> [UInt8] {
    do {
      return try encode(value)
    } catch {
      throw failure(String(describing: error))
    }
  }
}
