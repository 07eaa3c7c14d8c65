// A durable core's turns: the drain's slices, their append, what a
// finished turn lets go, and what a failure or the close ends (see
// Core+Journal.swift for the driver and JournalStateMachine.swift for the
// decisions).
extension Core {
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
      // Lost with the append: its dispatchers got the error, its senders
      // are told one by one.
      reportUntold(slice, driver.machine.failure ?? .shutDown)
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
    reportUntold(slice, error)
    for envelope in slice { envelope.lineage?.leave() }
    mailbox.report(reduced: slice.count)
  }

  /// Reports each of `slice`'s actions not journaled whose dispatcher, if
  /// any, was not told by the failure.
  func reportUntold(_ slice: ArraySlice<Envelope<Action>>, _ error: CoreError) {
    guard let driver = journal else { return }
    for envelope in slice where !driver.machine.wasToldOfFailure(envelope.lineage.map(ObjectIdentifier.init)) {
      reportNotJournaled(envelope.action, error)
    }
  }

  func reportNotJournaled(_ action: Action, _ error: any Error) {
    diagnostics(
      EffectFailure(error: CoreDiagnostic.notJournaled(action: action, error: error), fileID: #fileID, line: #line))
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
}
