// A durable core: every action goes through the mailbox, and only the
// journaled drain reduces. A turn reduces a slice, encoding each action
// before the reducer gets it, then appends the records off the core; only
// then do its effects start, its observers see it and its dispatchers and
// readers go. The decisions are `JournalStateMachine`'s.

/// What a held-back publication of one reduced action was.
@usableFromInline
enum HeldDelivery<State: Sendable, Action: Sendable> {
  case record(ActionRecord<State, Action>)
  case state(State)
}

/// A durable core's journal and who waits on it. A class, so a core without
/// a journal holds one `nil` pointer. Only the core, on its actor, touches it.
@usableFromInline
final class JournalDriver<State: Sendable, Action: Sendable> {
  let journal: any CoreJournal<State, Action>
  var machine = JournalStateMachine()
  var dispatchers: [ObjectIdentifier: CheckedContinuation<CoreError?, Never>] = [:]
  var readers: [Int: CheckedContinuation<Void, Never>] = [:]
  var turnWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
  /// The drain, waiting for released readers to run before its next turn.
  var drainWaitingForReaders: CheckedContinuation<Void, Never>?
  var closeWaiters: [CheckedContinuation<Void, Never>] = []
  var isClosed = false
  var nextID = 0
  var syncTimer: Task<Void, Never>?

  // The turn in progress.
  /// Whether actions reduced now are staged: only inside a turn.
  @usableFromInline var isReducing = false
  @usableFromInline var staged: [[UInt8]] = []
  @usableFromInline var heldJobs: [EffectJob] = []
  @usableFromInline var heldDeliveries: [HeldDelivery<State, Action>] = []
  /// The envelope being reduced: its dispatcher's key, and whether the
  /// next action staged is the envelope's own (a refusal of it is the
  /// dispatcher's) rather than a follow-up.
  var currentKey: ObjectIdentifier?
  var isEnvelopeAction = false

  init(journal: any CoreJournal<State, Action>) {
    self.journal = journal
  }

  func makeID() -> Int {
    nextID += 1
    return nextID
  }
}

extension Core {
  /// Makes a durable core on `journal`: recovers the state the journal
  /// holds, then journals every action before anything outside the core
  /// sees it.
  ///
  /// ```swift
  /// let journal = try FileJournal<Orders, OrderAction>(directory: "/var/lib/orders")
  /// let orders = try await Core(initialState: Orders(), journal: journal, reducer: reduceOrders)
  /// try await orders.dispatch(.place(order))   // on disk, then reduced
  /// ```
  ///
  /// Recovery starts from the journal's newest snapshot (or
  /// `initialState`) and reduces the actions after it with the reducer,
  /// starting no effect: what effects sent is in the journal, and an effect
  /// in flight at a crash does not run again. Middleware added later does
  /// not see them.
  ///
  /// Everything a core offers works the same on a durable one. What
  /// changes is when things happen: ``dispatch(_:)`` returns, ``state``
  /// reads, effects start and observers see an action only once its slice
  /// is appended (on disk, if the journal syncs each append). `send` and
  /// ``enqueue(_:)`` return once the action is queued. An action the
  /// journal refuses (``CoreJournal/encode(_:)`` throws) is not reduced,
  /// and its dispatcher gets ``CoreError/journal(_:)``, or the diagnostics
  /// handler ``CoreDiagnostic/notJournaled(action:error:)``. If an append
  /// fails, the core shuts down (its state may then hold the last slice,
  /// which the journal may not): open the journal again to go on from what
  /// it holds. ``shutdown(_:)`` closes the journal.
  ///
  /// - Parameters:
  ///   - initialState: The state when the journal holds no snapshot.
  ///   - journal: Where the actions go, used by this core alone: a journal
  ///     given to a second core stops the program with a message.
  ///   - dependencies: The workers effects use, as for a core in memory.
  ///   - clock: The clock effects read time from; it also times the
  ///     journal's interval syncs (``CoreJournal/syncInterval``).
  ///   - mailboxCapacity: The most actions from outside the mailbox holds;
  ///     `nil` for no bound. A `dispatch` is never refused for room, but
  ///     until its action is journaled it counts in the queue's depth like
  ///     a send, so `send` and `enqueue` may find the mailbox full meanwhile.
  ///   - diagnostics: Receives what effects throw and what the core
  ///     reports about its journal (``CoreDiagnostic``).
  ///   - reducer: Reduces each action, live and on recovery: it must give
  ///     the same state for the same actions.
  /// - Throws: ``CoreError/journal(_:)`` with the journal's error if it
  ///   could not be recovered; the journal is then closed.
  public init(
    initialState: State,
    journal: some CoreJournal<State, Action>,
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    mailboxCapacity: Int? = nil,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    reducer: Reduce<State, Action>
  ) async throws(CoreError) {
    self.init(
      initialState: initialState, dependencies: dependencies, clock: clock, mailboxCapacity: mailboxCapacity,
      diagnostics: diagnostics, reducer: reducer)
    do {
      try await recover(from: journal)
    } catch {
      await journal.close()
      throw .journal(error)
    }
  }

  /// Reduces what `journal` holds, then attaches it.
  func recover(from journal: some CoreJournal<State, Action>) async throws {
    if let state = try await journal.recoverState() { currentState = state }
    var count = 0
    while let actions = try await journal.recoverActions() {
      runningUserCode { for action in actions { reducer.replay(action, into: &currentState) } }
      count += actions.count
    }
    countReduced(count)
    let driver = JournalDriver(journal: journal)
    self.journal = driver
    // Every action now takes the slower path, where it is staged.
    hasMiddleware = true
    if let interval = journal.syncInterval { startSyncTimer(every: interval) }
  }

  /// Syncs the journal now: every action accepted before the call is on
  /// disk when it returns, whatever the journal's interval. On a core
  /// without a journal it returns at once.
  ///
  /// ```swift
  /// orders.send(.place(order))
  /// try await orders.sync()   // before telling a peer it is durable
  /// ```
  ///
  /// - Throws: ``CoreError/journal(_:)`` if the sync failed;
  ///   ``CoreError/shutDown`` once the core has begun to shut down.
  public func sync() async throws(CoreError) {
    guard journal != nil else { return }
    guard lifecycle.acceptsOutsideActions else { throw .shutDown }
    checkNotRunningUserCode()
    await awaitJournalPosition()
    try await syncUnderTurn()
  }

  /// Syncs the journal with the turn held.
  /// - Throws: why no turn is given, or `.journal` with the sync's error.
  func syncUnderTurn() async throws(CoreError) {
    guard let driver = journal else { return }
    try await acquireJournalTurn()
    defer { releaseJournalTurn() }
    do {
      try await driver.journal.sync()
      driver.machine.synced()
    } catch {
      throw .journal(error)
    }
  }

  func startSyncTimer(every interval: Duration) {
    let nap = min(interval, .seconds(3_600))
    let clock = self.clock
    journal?.syncTimer = Task { [weak self] in
      while true {
        do { try await clock.sleep(for: nap) } catch { return }
        guard let self else { return }
        guard await self.syncOnTimer() else { return }
      }
    }
  }

  /// One tick of the interval sync; `false` once the journal is closed.
  func syncOnTimer() async -> Bool {
    guard let driver = journal, !driver.isClosed else { return false }
    guard driver.machine.hasUnsynced else { return true }
    do {
      try await syncUnderTurn()
    } catch {
      // A refused turn means the journal failed or closed: the timer ends.
      guard driver.machine.failure == nil, case .journal(let failure) = error else { return false }
      diagnostics(EffectFailure(error: CoreDiagnostic.syncFailed(failure), fileID: #fileID, line: #line))
    }
    return true
  }

  // MARK: - Dispatch and reads

  /// `dispatch` on a durable core: queues behind what is queued, returns
  /// once journaled and reduced. Takes no room in a bounded mailbox.
  @usableFromInline
  func dispatchJournaled(_ actions: [Action]) async throws(CoreError) -> EffectHandle {
    guard let driver = journal else { programmerError("Core.dispatchJournaled: the core has no journal") }
    checkNotRunningUserCode()
    guard !actions.isEmpty else {
      await awaitJournalPosition()
      return EffectHandle(lineage: nil)
    }
    let lineage = Lineage(registry: currentEffectContext().registry)
    let key = ObjectIdentifier(lineage)
    if case .refused(let error) = driver.machine.dispatcherArrived(key, count: actions.count) { throw error }
    for _ in actions { lineage.enter() }
    let refusal = await withCheckedContinuation { (continuation: CheckedContinuation<CoreError?, Never>) in
      driver.dispatchers[key] = continuation
      let envelopes = actions.map { Envelope(action: $0, lineage: lineage) }
      let sent =
        envelopes.count == 1
        ? mailbox.send(envelopes[0], fromEffect: false, fromInside: true)
        : mailbox.send(contentsOf: envelopes, fromInside: true)
      if handle(sent) != .accepted {
        driver.dispatchers[key] = nil
        driver.machine.dispatcherLeft(key)
        for _ in actions { lineage.leave() }
        continuation.resume(returning: .shutDown)
      }
    }
    if let refusal { throw refusal }
    return EffectHandle(lineage: lineage)
  }

  /// Reduces what is queued before the caller goes on: at once, or on a
  /// durable core by waiting for its drain to pass it.
  @usableFromInline
  func catchUpQueued() async {
    if journal != nil { await awaitJournalPosition() } else { flushMailbox() }
  }

  /// Returns once every action accepted before the call is dealt with and
  /// the state holds nothing the journal does not.
  @usableFromInline
  func awaitJournalPosition() async {
    guard let driver = journal else { return }
    if let failure = driver.machine.failure {
      // No turn will come: what is queued is refused here, or a caller
      // that loops on the mailbox (`settle`) would never let the drain in.
      refusePending(failure)
      return
    }
    let id = driver.makeID()
    let position = driver.machine.passed + mailbox.figures.depth
    guard driver.machine.readerArrived(id, position: position) == .wait else { return }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      driver.readers[id] = continuation
    }
    if driver.machine.readerRan(), let drain = driver.drainWaitingForReaders {
      driver.drainWaitingForReaders = nil
      drain.resume()
    }
  }

  // MARK: - Staging, on the reducing paths

  /// Before the reducer gets `action` on a durable core: encodes it into the
  /// turn's records. Returns `false` if the journal refused it (then it is
  /// not reduced; its dispatcher or the diagnostics handler is told).
  @usableFromInline
  func stageForJournal(_ action: Action) -> Bool {
    guard let driver = journal, driver.isReducing else { return true }
    let isEnvelopeAction = driver.isEnvelopeAction
    driver.isEnvelopeAction = false
    do {
      driver.staged.append(try driver.journal.encode(action))
      return true
    } catch {
      if !(isEnvelopeAction && driver.machine.refused(driver.currentKey, .journal(error))) {
        reportNotJournaled(action, error)
      }
      return false
    }
  }

  /// Whether effects and publications are held back for the turn's append.
  @inlinable
  var isHoldingForJournal: Bool { journal?.isReducing ?? false }
}

// MARK: - For the package's tests

extension Core {
  /// Readers waiting for the journal's drain.
  var journalReadersWaiting: Int { journal?.readers.count ?? 0 }
}
