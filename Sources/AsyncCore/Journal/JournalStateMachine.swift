/// Decides what a durable core does around its journal: who may call the
/// journal (one turn at a time: a slice's append, a replay's, a sync),
/// which dispatchers and readers a finished turn lets go, when a snapshot
/// is due, and what a failure ends. Pure: it holds ids, never
/// continuations; the core's `JournalDriver` keeps those and resumes what
/// the returned actions name.
struct JournalStateMachine {
  /// A dispatcher's key: its action's lineage.
  typealias Key = ObjectIdentifier

  struct Dispatcher {
    /// Its actions not yet dealt with by a finished turn.
    var remaining: Int
    /// Why the first of them that was not reduced was refused.
    var refusal: CoreError?
  }

  /// Actions taken from the mailbox that finished turns have dealt with:
  /// the position a reader waits for.
  private(set) var passed = 0
  private(set) var turnHeld = false
  /// Waiting for the turn, first come first served.
  private var turnWaiters: [Int] = []
  /// Waiting for `passed` to reach a position; positions never decrease,
  /// so the array is in order.
  private var readers: [(id: Int, position: Int)] = []
  private var dispatchers: [Key: Dispatcher] = [:]
  /// Dispatchers whose last action the current turn dealt with, with the
  /// turn's mailbox actions, let go when it ends.
  private var finishing: [Key] = []
  private var takenThisTurn = 0
  /// Whether the turn in progress has reduced actions its append has not
  /// made durable yet: then the state is ahead of the journal, and no
  /// reader may see it.
  private(set) var isAheadOfJournal = false
  /// Readers let go whose task has not run yet; the next turn waits for
  /// them, so each reads the state its release was for.
  private(set) var readersToRun = 0
  private(set) var isSnapshotDue = false
  /// Whether records were appended since the last sync.
  private(set) var hasUnsynced = false
  /// Set by the first failed append; every call after it gets it.
  private(set) var failure: CoreError?
  /// The dispatchers the failure let go: their actions, still queued, are
  /// theirs to know about, not the diagnostics handler's.
  private var failedDispatchers: Set<Key> = []

  /// After a failure: whether the queued envelope of `key` belongs to a
  /// dispatcher already told.
  func wasToldOfFailure(_ key: Key?) -> Bool {
    guard let key else { return false }
    return failedDispatchers.contains(key)
  }

  // MARK: - Waiters

  enum Admission: Equatable {
    case now
    case wait
    case refused(CoreError)
  }

  /// A dispatcher of `count` actions, about to queue them.
  mutating func dispatcherArrived(_ key: Key, count: Int) -> Admission {
    if let failure { return .refused(failure) }
    dispatchers[key] = Dispatcher(remaining: count, refusal: nil)
    return .wait
  }

  /// A dispatcher whose actions the mailbox refused: forgotten.
  mutating func dispatcherLeft(_ key: Key) {
    dispatchers[key] = nil
  }

  /// A reader that waits until every action accepted before it (`position`,
  /// counted as ``passed`` counts) is dealt with.
  mutating func readerArrived(_ id: Int, position: Int) -> Admission {
    if failure != nil || (passed >= position && !isAheadOfJournal) { return .now }
    readers.append((id, position))
    return .wait
  }

  /// A caller that wants the journal to itself.
  mutating func turnRequested(_ id: Int) -> Admission {
    if let failure { return .refused(failure) }
    if turnHeld {
      turnWaiters.append(id)
      return .wait
    }
    turnHeld = true
    return .now
  }

  // MARK: - A turn

  /// The turn's slice was taken from the mailbox: `count` actions.
  mutating func took(_ count: Int) {
    if !turnHeld { programmerError("JournalStateMachine.took: no turn is held") }
    takenThisTurn += count
    isAheadOfJournal = true
  }

  /// A released reader ran; returns whether the turn waiting for the
  /// released readers may go now.
  mutating func readerRan() -> Bool {
    // Readers let go by a failure were never counted.
    guard readersToRun > 0 else { return false }
    readersToRun -= 1
    return readersToRun == 0
  }

  /// The top action of `key`'s envelope was refused: not reduced.
  /// Returns `false` when no dispatcher waits on it (the diagnostics
  /// handler is told instead).
  mutating func refused(_ key: Key?, _ error: CoreError) -> Bool {
    guard let key, dispatchers[key] != nil else { return false }
    if dispatchers[key]?.refusal == nil { dispatchers[key]?.refusal = error }
    return true
  }

  /// One of `key`'s actions was dealt with (reduced or refused) in this turn.
  mutating func dealtWith(_ key: Key?) {
    guard let key, var dispatcher = dispatchers[key] else { return }
    dispatcher.remaining -= 1
    dispatchers[key] = dispatcher
    if dispatcher.remaining == 0 { finishing.append(key) }
  }

  /// What a finished turn lets go.
  struct Release: Equatable {
    /// Dispatchers to resume, each with its refusal (`nil`: reduced).
    var dispatchers: [Key: CoreError?] = [:]
    var readers: [Int] = []
  }

  /// The turn's records were appended (`snapshotDue` as the journal said),
  /// or it had none to append.
  mutating func appended(snapshotDue: Bool, wroteRecords: Bool) {
    if snapshotDue { isSnapshotDue = true }
    if wroteRecords { hasUnsynced = true }
  }

  /// A snapshot was written (or failed, which is reported, not retried
  /// until the journal says one is due again).
  mutating func snapshotTaken() {
    isSnapshotDue = false
  }

  /// A sync was done.
  mutating func synced() {
    hasUnsynced = false
  }

  /// The turn's records are durable: the slice's dispatchers and the
  /// readers it passed go. The turn is still held (a snapshot may follow).
  mutating func finished() -> Release {
    if !turnHeld { programmerError("JournalStateMachine.finished: no turn is held") }
    isAheadOfJournal = false
    var release = Release()
    for key in finishing {
      if let dispatcher = dispatchers.removeValue(forKey: key) {
        release.dispatchers[key] = dispatcher.refusal
      }
    }
    finishing.removeAll()
    passed += takenThisTurn
    takenThisTurn = 0
    var count = 0
    while count < readers.count, readers[count].position <= passed { count += 1 }
    release.readers = readers.prefix(count).map(\.id)
    readers.removeFirst(count)
    readersToRun += count
    return release
  }

  /// Gives the turn up; returns the waiter that gets it next.
  mutating func releaseTurn() -> Int? {
    if !turnHeld { programmerError("JournalStateMachine.releaseTurn: no turn is held") }
    if turnWaiters.isEmpty {
      turnHeld = false
      return nil
    }
    return turnWaiters.removeFirst()
  }

  /// The journal failed in this turn: everyone waiting goes, dispatchers
  /// with `error`, and from now on every turn and dispatcher is refused.
  mutating func failed(_ error: CoreError) -> (dispatchers: [Key], readers: [Int], turnWaiters: [Int]) {
    failure = error
    isAheadOfJournal = false
    let waiting = Array(dispatchers.keys)
    failedDispatchers.formUnion(waiting)
    dispatchers.removeAll()
    finishing.removeAll()
    passed += takenThisTurn
    takenThisTurn = 0
    let waitingReaders = readers.map(\.id)
    readers.removeAll()
    let waitingForTurn = turnWaiters
    turnWaiters.removeAll()
    turnHeld = false
    return (waiting, waitingReaders, waitingForTurn)
  }
}
