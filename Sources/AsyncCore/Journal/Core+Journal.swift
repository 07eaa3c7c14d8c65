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
    guard let driver = journal else { return }
    guard lifecycle.acceptsOutsideActions else { throw .shutDown }
    checkNotRunningUserCode()
    await awaitJournalPosition()
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
      try await acquireJournalTurn()
    } catch {
      return false
    }
    defer { releaseJournalTurn() }
    do {
      try await driver.journal.sync()
      driver.machine.synced()
    } catch {
      diagnostics(EffectFailure(error: CoreDiagnostic.syncFailed(error), fileID: #fileID, line: #line))
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

  // MARK: - Turns

  /// Waits for the journal to be this caller's alone.
  /// - Throws: why no turn is given any more (the journal failed or closed).
  func acquireJournalTurn() async throws(CoreError) {
    guard let driver = journal else { programmerError("Core.acquireJournalTurn: the core has no journal") }
    let id = driver.makeID()
    switch driver.machine.turnRequested(id) {
    case .now: return
    case .refused(let error): throw error
    case .wait:
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        driver.turnWaiters[id] = continuation
      }
      if let failure = driver.machine.failure { throw failure }
    }
  }

  func releaseJournalTurn() {
    guard let driver = journal, driver.machine.turnHeld else { return }
    if let next = driver.machine.releaseTurn() { driver.turnWaiters.removeValue(forKey: next)?.resume() }
  }

  /// The drain of a durable core: takes what the mailbox holds and, a slice
  /// at a time, journals and reduces it.
  @usableFromInline
  func journaledDrain() async {
    while var batch = mailbox.takeBatch(from: &spareBatch, stayingScheduled: false, pendingIfOver: .max) {
      var start = 0
      var resumed = 0
      while start < batch.count {
        let end = min(batch.count, start + Self.drainSlice)
        resumed += await journalSlice(batch[start..<end])
        start = end
      }
      Mailbox.recycle(&batch, into: &spareBatch)
      if resumed > 1 { await gatherDispatchers(resumed) }
    }
  }

  /// Lets the dispatchers just resumed queue their next action before the
  /// next take, so one append carries them all (group commit): yields while
  /// the mailbox grows, until it holds as many more as were resumed or two
  /// turns pass with nothing new (at most 64).
  func gatherDispatchers(_ resumed: Int) async {
    let target = mailbox.figures.depth + resumed
    var depth = mailbox.figures.depth
    var quiet = 0
    var turns = 0
    while depth < target, quiet < 2, turns < 64 {
      await Task.yield()
      let now = mailbox.figures.depth
      quiet = now > depth ? 0 : quiet + 1
      depth = now
      turns += 1
    }
  }

  /// One turn: reduces `slice`, staging each action, appends, then lets
  /// go of what waited on it. Returns how many dispatchers it resumed.
  func journalSlice(_ slice: ArraySlice<Envelope<Action>>) async -> Int {
    guard let driver = journal else { programmerError("Core.journaledDrain: no journal") }
    if driver.machine.readersToRun > 0 {
      await withCheckedContinuation { driver.drainWaitingForReaders = $0 }
    }
    do {
      try await acquireJournalTurn()
    } catch {
      refuseQueued(slice, error)
      return 0
    }
    driver.machine.took(slice.count)
    driver.isReducing = true
    for envelope in slice {
      let key = envelope.lineage.map(ObjectIdentifier.init)
      driver.currentKey = key
      driver.isEnvelopeAction = true
      var lineage = envelope.lineage
      reduce(envelope.action, lineage: &lineage)
      envelope.lineage?.leave()
      driver.machine.dealtWith(key)
    }
    driver.isReducing = false
    driver.currentKey = nil
    countReduced(slice.count)
    guard await appendStaged() else {
      // The slice is lost with the append: its dispatchers got the error,
      // its senders are told here, one by one.
      let error = driver.machine.failure ?? .shutDown
      for envelope in slice where !driver.machine.wasToldOfFailure(envelope.lineage.map(ObjectIdentifier.init)) {
        diagnostics(
          EffectFailure(
            error: CoreDiagnostic.notJournaled(action: envelope.action, error: error), fileID: #fileID, line: #line))
      }
      mailbox.report(reduced: slice.count)
      return 0
    }
    mailbox.report(reduced: slice.count)
    sliceCount.store(sliceCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    return await endTurn()
  }

  /// Appends what the turn staged. On failure, the core shuts down and
  /// everyone waiting is told; returns `false`.
  func appendStaged() async -> Bool {
    guard let driver = journal else { return false }
    let records = driver.staged
    driver.staged = []
    guard !records.isEmpty else {
      driver.machine.appended(snapshotDue: false, wroteRecords: false)
      return true
    }
    do {
      let due = try await driver.journal.append(records)
      driver.machine.appended(snapshotDue: due, wroteRecords: true)
      return true
    } catch {
      // Told before the dispatchers, who learn it from their error.
      diagnostics(EffectFailure(error: CoreDiagnostic.journalFailed(error), fileID: #fileID, line: #line))
      failJournal(.journal(error))
      return false
    }
  }

  /// After a durable append: starts the held effects, publishes, lets go
  /// of the dispatchers and readers, snapshots if due, gives the turn up.
  func endTurn() async -> Int {
    guard let driver = journal else { return 0 }
    let jobs = driver.heldJobs
    driver.heldJobs = []
    for job in jobs where !effectQueue.enqueue(job) { startEffectRunner() }
    deliverHeld()
    publishBatch()
    let release = driver.machine.finished()
    for (key, refusal) in release.dispatchers {
      driver.dispatchers.removeValue(forKey: key)?.resume(returning: refusal)
    }
    for id in release.readers { driver.readers.removeValue(forKey: id)?.resume() }
    if driver.machine.isSnapshotDue {
      driver.machine.snapshotTaken()
      do {
        try await driver.journal.snapshot(currentState)
      } catch {
        diagnostics(EffectFailure(error: CoreDiagnostic.snapshotFailed(error), fileID: #fileID, line: #line))
      }
    }
    releaseJournalTurn()
    return release.dispatchers.count
  }

  /// The per-action publications the turn held back, in order.
  func deliverHeld() {
    guard let driver = journal, !driver.heldDeliveries.isEmpty else { return }
    let held = driver.heldDeliveries
    driver.heldDeliveries = []
    for delivery in held {
      switch delivery {
      case .record(let record):
        for sink in observers.actionObservers { sink.deliver(record) }
      case .state(let state):
        publish(state, to: observers.everyStateSubscriptions)
      }
    }
  }

  /// The journal failed or closed: nothing more is journaled. Gates close,
  /// held effects are dropped, and everyone waiting is told.
  func failJournal(_ error: CoreError) {
    guard let driver = journal else { return }
    driver.isReducing = false
    driver.staged = []
    driver.heldDeliveries = []
    for job in driver.heldJobs { job.abandon() }
    driver.heldJobs = []
    let waiting = driver.machine.failed(error)
    for key in waiting.dispatchers { driver.dispatchers.removeValue(forKey: key)?.resume(returning: error) }
    for id in waiting.readers { driver.readers.removeValue(forKey: id)?.resume() }
    for id in waiting.turnWaiters { driver.turnWaiters.removeValue(forKey: id)?.resume() }
    driver.drainWaitingForReaders?.resume()
    driver.drainWaitingForReaders = nil
    guard error != .shutDown else { return }
    _ = lifecycle.shutdown(.immediate)
    mailbox.refuseWaiters()
    Task { await self.shutdown(.immediate) }
  }

  /// Refuses everything the mailbox holds, once the journal failed or closed.
  func refusePending(_ error: CoreError) {
    var batch = mailbox.flush(from: &spareBatch)
    guard !batch.isEmpty else { return }
    refuseQueued(batch[...], error)
    Mailbox.recycle(&batch, into: &spareBatch)
  }

  /// Envelopes taken after the journal failed or closed: not reduced; each
  /// sender that was not told yet is reported.
  func refuseQueued(_ slice: ArraySlice<Envelope<Action>>, _ error: CoreError) {
    guard let driver = journal else { return }
    for envelope in slice {
      let key = envelope.lineage.map(ObjectIdentifier.init)
      if !driver.machine.wasToldOfFailure(key) {
        diagnostics(
          EffectFailure(
            error: CoreDiagnostic.notJournaled(action: envelope.action, error: error), fileID: #fileID, line: #line))
      }
      envelope.lineage?.leave()
    }
    mailbox.report(reduced: slice.count)
  }

  /// Closes the journal once the core has stopped; a later caller waits
  /// for the first one's close.
  func closeJournal(first: Bool) async {
    guard let driver = journal else { return }
    guard first else {
      if !driver.isClosed { await withCheckedContinuation { driver.closeWaiters.append($0) } }
      return
    }
    driver.syncTimer?.cancel()
    let turn: Bool
    do {
      try await acquireJournalTurn()
      turn = true
    } catch {
      turn = false
    }
    await driver.journal.close()
    if turn { failJournal(.shutDown) }
    driver.isClosed = true
    for waiter in driver.closeWaiters { waiter.resume() }
    driver.closeWaiters = []
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
        diagnostics(
          EffectFailure(error: CoreDiagnostic.notJournaled(action: action, error: error), fileID: #fileID, line: #line))
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
