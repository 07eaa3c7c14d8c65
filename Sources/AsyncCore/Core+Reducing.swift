import Synchronization

// Reducing: the drain task, batches, single actions, and publication. The
// hot paths are `@inlinable` so a client compiles them for its own State and
// Action (see Core.swift for the storage and its exclusivity proof).
extension Core {
  /// Runs on the drain task started by `send`: reduces what the mailbox holds,
  /// batch by batch, publishing once per batch, until it is empty.
  @inlinable
  func drain() async {
    var reducedSinceYield = 0
    var hasLingered = false
    while true {
      var taken = takeBatchBuffer()
      // Before going idle, linger once: a producer sending in a loop then
      // finds this drain still on its way instead of starting a task per
      // batch, which costs it more than the sends themselves.
      let tookBatch = emptyMailbox { $0.takeBatch(into: &taken, stayingScheduled: !hasLingered) }
      guard tookBatch else {
        batch = taken
        if hasLingered { return }
        hasLingered = true
        await Task.yield()
        continue
      }
      hasLingered = false
      let batchSize = taken.count
      reducedSinceYield += batchSize
      reduceBatch(&taken)
      publishBatch()
      if batchSize < Self.smallBatch {
        // A small batch means the drain keeps pace with a producer and the
        // two contend for the mailbox's lock on every action; yielding once
        // lets the next batch grow, so the lock is taken far less often.
        reducedSinceYield = 0
        await Task.yield()
      } else if reducedSinceYield >= Self.actionsBetweenYields {
        // Under sustained sends, let callers of `dispatch`, `state` and
        // `observe` waiting on the core run between batches.
        reducedSinceYield = 0
        await Task.yield()
      }
    }
  }

  @inlinable
  static var actionsBetweenYields: Int { 4_096 }

  @inlinable
  static var smallBatch: Int { 64 }

  /// Reduces what `send` and effects sent, so it precedes what the caller
  /// does next.
  @inlinable
  func flushMailbox() {
    if reducePending() { publishBatch() }
  }

  /// Reduces pending actions without publishing to latest-value observers.
  /// Returns whether there were any.
  @inlinable
  @discardableResult
  func reducePending() -> Bool {
    guard mailboxHasActions.load(ordering: .acquiring) else { return false }
    var taken = takeBatchBuffer()
    emptyMailbox { $0.flush(into: &taken) }
    let hadPending = !taken.isEmpty
    reduceBatch(&taken)
    return hadPending
  }

  /// Reduces `envelopes`, starts their effects in their senders' lineages,
  /// and keeps the emptied buffer for the next batch.
  @inlinable
  func reduceBatch(_ envelopes: inout [Envelope<Action>]) {
    // With no per-action observer (the common case), skip their checks per
    // action: nothing registers in the middle of this synchronous loop.
    let hasPerActionObservers = hasObservers && (!actionCells.isEmpty || !everyStateSubscriptions.isEmpty)
    if !hasPerActionObservers, case .pure(let reduce) = reducer {
      reducing { Self.reduceAll(envelopes, into: &currentState, with: reduce) }
    } else {
      for envelope in envelopes {
        var lineage = envelope.lineage
        if hasPerActionObservers {
          reduce(envelope.action, lineage: &lineage)
        } else {
          apply(envelope.action, lineage: &lineage)
        }
        // The follow-up itself is done once its own effects have entered.
        envelope.lineage?.leave()
      }
    }
    envelopes.removeAll(keepingCapacity: true)
    swap(&envelopes, &batch)
  }

  /// Stops a reducer that reached back into its own core.
  @inlinable
  func checkNotReducing() {
    precondition(
      !isReducing,
      "AsyncCore: a reducer reached back into its own core; a reducer may only change the state it is given"
    )
  }

  /// Runs `body`, which calls the reducer, with `isReducing` set: the one
  /// stretch of user code that holds an `inout` to the state.
  @inlinable
  func reducing<Result>(_ body: () -> Result) -> Result {
    checkNotReducing()
    isReducing = true
    defer { isReducing = false }
    return body()
  }

  /// Moves what the mailbox holds out through `body` (a take, flush or
  /// close, after which nothing is pending), keeping `mailboxHasActions`
  /// in step under the same lock.
  @inlinable
  nonisolated func emptyMailbox<Result: Sendable>(_ body: (inout MailboxStateMachine<Envelope<Action>>) -> Result)
    -> Result
  {
    mailbox.withLock { mailbox in
      defer { mailboxHasActions.store(false, ordering: .relaxed) }
      return body(&mailbox)
    }
  }

  /// Reduces a pure reducer's batch in one tight loop, with no per-action
  /// observer or effect checks.
  @inlinable
  static func reduceAll(
    _ envelopes: [Envelope<Action>],
    into state: inout State,
    with reduce: @Sendable (inout State, Action) -> Void
  ) {
    for envelope in envelopes {
      reduce(&state, envelope.action)
      envelope.lineage?.leave()
    }
  }

  @inlinable
  func takeBatchBuffer() -> [Envelope<Action>] {
    var taken: [Envelope<Action>] = []
    swap(&taken, &batch)
    return taken
  }

  /// Runs the reducer, starts its effects in `lineage` (made on first
  /// need: a dispatch that starts no effect allocates nothing), and publishes
  /// to the per-action observers.
  @inlinable
  func reduce(_ action: Action, lineage: inout Lineage?) {
    guard hasObservers else {
      apply(action, lineage: &lineage)
      return
    }
    // The state before is copied only while an action log is registered.
    let before = actionCells.isEmpty ? nil : currentState
    apply(action, lineage: &lineage)
    if let before {
      let record = ActionRecord(action: action, stateBefore: before, stateAfter: currentState)
      for cell in actionCells { cell.deliver(record) }
    }
    let state = currentState  // one exclusive read, not one per observer
    for subscription in everyStateSubscriptions { subscription.publish(state) }
  }

  @inlinable
  func apply(_ action: Action, lineage: inout Lineage?) {
    switch reducer {
    case .pure(let reduce):
      reducing { reduce(&currentState, action) }
    case .effectful(let reduce):
      let effect = reducing { reduce(&currentState, action) }
      guard !effect.isNone else { return }
      if lineage == nil { lineage = Lineage() }
      start(effect, lineage: lineage)
    }
  }

  /// Publishes the state to latest-value observers: once per batch.
  @inlinable
  func publishBatch() {
    guard hasObservers else { return }
    removeEndedObservers()
    guard !latestSubscriptions.isEmpty else { return }
    let state = currentState  // one exclusive read, not one per observer
    for subscription in latestSubscriptions { subscription.publish(state) }
  }
}
