import Synchronization

// Dispatch: `dispatch`, `send`, the drain task, and reducing. The hot paths
// are `@inlinable` so a client compiles them for its own State and Action
// (see Core.swift for the storage and its exclusivity proof).
extension Core {
  /// Reduces `action` and returns once it is reduced, with a handle to await
  /// the effects it started.
  ///
  /// ```swift
  /// try await core.dispatch(.increment)
  /// try await core.dispatch(.refresh).finish()  // and wait for its effects
  /// ```
  ///
  /// Every action the core accepted before this call, from any task, is
  /// reduced first, as for ``state``: the caller's own earlier sends
  /// included. Actions that `.send` effects return are reduced before this returns
  /// (see ``Effect/send(_:)``).
  ///
  /// What has seen the new state when this returns:
  /// - ``state``, read by any task afterwards: a task reads its own writes;
  /// - synchronous subscribers
  ///   (``subscribe(to:removeDuplicates:buffering:_:)-(KeyPath<State,Props>Sendable,_,_,_)``) and
  ///   every-state (`.all`) observers, which get every state in order;
  /// - latest-value observers, when they were quiet: the first dispatch
  ///   after a quiet spell publishes to them at once. While dispatches come
  ///   back to back, their publications are coalesced: the core publishes
  ///   the newest state to latest-value observers soon after, once for many
  ///   dispatches, and always ends them on the final state (meanwhile a
  ///   consumer may still take the value published before). Reading
  ///   ``state``, ``waitUntilIdle()`` and ``shutdown(_:)`` publish what is
  ///   left first.
  ///
  /// On a durable core it returns once the action is journaled too (see
  /// ``init(initialState:journal:dependencies:clock:mailboxCapacity:diagnostics:reducer:)``).
  ///
  /// - Throws: ``CoreError/shutDown`` once the core has begun to shut down;
  ///   ``CoreError/journal(_:)`` on a durable core whose journal refused the
  ///   action or failed. Either way the action was not reduced.
  @inlinable
  @discardableResult
  public func dispatch(_ action: Action) async throws(CoreError) -> EffectHandle {
    guard lifecycle.acceptsOutsideActions else { throw .shutDown }
    if journal != nil { return try await dispatchJournaled([action]) }
    checkNotRunningUserCode()
    reducePending()
    var lineage: Lineage?
    reduce(action, lineage: &lineage)
    countReduced(1)
    publishAfterDispatch()
    return EffectHandle(lineage: lineage)
  }

  /// Reduces `actions` in order, in one hop to the core, and publishes once.
  ///
  /// ```swift
  /// try await core.dispatch(contentsOf: [.increment, .increment, .decrement])
  /// ```
  ///
  /// Latest-value observers see one update for the whole batch; every-state
  /// observers and ``actions(buffering:)`` see each action. The handle
  /// covers the effects of all of them.
  ///
  /// - Throws: ``CoreError/shutDown`` once the core has begun to shut down;
  ///   none of the actions was reduced. On a durable core,
  ///   ``CoreError/journal(_:)`` if the journal refused one of them (that
  ///   one was not reduced, the others were) or failed.
  @inlinable
  @discardableResult
  public func dispatch(contentsOf actions: some Sequence<Action>) async throws(CoreError) -> EffectHandle {
    guard lifecycle.acceptsOutsideActions else { throw .shutDown }
    if journal != nil { return try await dispatchJournaled(Array(actions)) }
    checkNotRunningUserCode()
    reducePending()
    var lineage: Lineage?
    var count = 0
    for action in actions {
      reduce(action, lineage: &lineage)
      count &+= 1
    }
    countReduced(count)
    publishAfterDispatch()
    return EffectHandle(lineage: lineage)
  }

  /// Queues `action` to be reduced and returns at once, from any context,
  /// synchronous code included.
  ///
  /// ```swift
  /// button.onTap = { core.send(.increment) }
  /// ```
  ///
  /// - Returns: ``SendResult/accepted`` if the core accepted the action; it
  ///   will be reduced. ``SendResult/shutDown`` if the core has begun to shut
  ///   down, ``SendResult/mailboxFull`` if its bounded mailbox has no room
  ///   (see `mailboxCapacity` in ``init(initialState:dependencies:clock:mailboxCapacity:diagnostics:reducer:)-(_,_,_,_,_,Reduce<State,Action>)``):
  ///   the action was not accepted.
  /// - Important: Actions sent from one task are reduced in the order sent,
  ///   and an accepted action is never dropped. By default the queue is
  ///   unbounded: a producer that outruns the reducer for long grows it;
  ///   give the core a `mailboxCapacity` to bound it, and send with
  ///   ``enqueue(_:)`` to wait for room. Once ``hasShutDown`` is `true` for
  ///   any task, `send` returns ``SendResult/shutDown`` for every task.
  @inlinable
  @discardableResult
  public nonisolated func send(_ action: Action) -> SendResult {
    handle(mailbox.send(Envelope(action: action, lineage: nil), fromEffect: false))
  }

  /// Queues `actions`, in order, with one lock and at most one wake-up: all
  /// of them, or none.
  ///
  /// ```swift
  /// core.send(contentsOf: [.increment, .increment])
  /// ```
  ///
  /// - Returns: ``SendResult/accepted`` if the core accepted the actions;
  ///   otherwise why it accepted none of them. With a `mailboxCapacity`,
  ///   more actions than the room left, or than the capacity itself, are
  ///   ``SendResult/mailboxFull``.
  @inlinable
  @discardableResult
  public nonisolated func send(contentsOf actions: some Sequence<Action>) -> SendResult {
    // Iterate the caller's sequence before taking the lock.
    let envelopes = actions.map { Envelope(action: $0, lineage: nil) }
    return handle(mailbox.send(contentsOf: envelopes))
  }

  /// Queues `action` once the mailbox has room, waiting for it if the core
  /// was made with a `mailboxCapacity` and its mailbox is full: the send
  /// that pushes back on a producer that outruns the reducer.
  ///
  /// ```swift
  /// for try await request in requests {
  ///   try await core.enqueue(.handle(request))   // waits while the mailbox is full
  /// }
  /// ```
  ///
  /// Returns once the action is queued, not once it is reduced (that is
  /// ``dispatch(_:)``). Without a capacity, or with room, it queues at once,
  /// like ``send(_:)``. Senders waiting for room are admitted in the order
  /// they began to wait, and ``send(_:)`` does not overtake them: while any
  /// waits, it returns ``SendResult/mailboxFull``. Room is made as the core
  /// reduces what the mailbox holds.
  ///
  /// - Throws: ``CoreError/shutDown`` if the core has begun to shut down,
  ///   before or while this waits; ``CoreError/cancelled`` if the task is
  ///   cancelled while it waits. Either way the action was not queued. A
  ///   task cancelled before the call still queues when there is room.
  @inlinable @inline(__always)
  public nonisolated(nonsending) func enqueue(_ action: Action) async throws(CoreError) {
    let envelope = Envelope(action: action, lineage: nil)
    // With room, exactly `send` (inlined, specialized for the caller's
    // types); only a full mailbox takes the waiting path.
    switch handle(mailbox.send(envelope, fromEffect: false)) {
    case .accepted: return
    case .shutDown, .childRemoved, .effectCancelled, .effectEnded: throw CoreError.shutDown
    case .mailboxFull:
      do {
        _ = handle(try await mailbox.waitForRoom(envelope))
      } catch let error as CoreError {
        throw error
      } catch {
        throw .cancelled
      }
    }
  }

  @inlinable
  nonisolated func handle(_ action: MailboxSendAction) -> SendResult {
    switch action {
    case .enqueued:
      return .accepted
    case .startDrain:
      // The one unstructured task at the core's boundary for actions. It
      // holds the core until the mailbox is empty, so accepted actions
      // outlive the caller's reference to the core.
      Task { await self.drain() }
      return .accepted
    case .rejected:
      return .shutDown
    case .full:
      return .mailboxFull
    }
  }

  /// Whether ``shutdown(_:)`` has been called: from that instant the core
  /// refuses actions from outside, for every task.
  ///
  /// ```swift
  /// if core.hasShutDown { return }   // and then core.send(…) is .shutDown
  /// ```
  public nonisolated var hasShutDown: Bool { !lifecycle.acceptsOutsideActions }

  /// Queues an action an effect sent, in its lineage.
  nonisolated func acceptFollowUp(_ action: Action, lineage: Lineage?) -> Bool {
    // Entered before the action is visible to the drain, which leaves.
    lineage?.enter()
    let accepted = handle(mailbox.send(Envelope(action: action, lineage: lineage), fromEffect: true)) == .accepted
    if !accepted { lineage?.leave() }
    return accepted
  }

  /// Reduces what `send` and effects sent, so it precedes what the caller
  /// does next, and publishes it.
  @inlinable
  func flushMailbox() {
    if reducePending() {
      publishBatch()
    } else if drainMachine.isPublicationDue {
      publishDue()
    }
  }

  /// Reduces pending actions without publishing to latest-value observers:
  /// the backlog first, as it is older than anything in the mailbox.
  /// Returns whether there were any.
  @inlinable @inline(__always)
  @discardableResult
  func reducePending() -> Bool {
    // The one check on every dispatch's path, inlined; the flag stays set
    // while the backlog holds any (see `Mailbox`).
    guard mailbox.hasPending else { return false }
    return reduceBacklogAndMailbox()
  }

  @inlinable
  func reduceBacklogAndMailbox() -> Bool {
    // On a durable core only the journaled drain reduces.
    if journal != nil { return false }
    var hadPending = false
    if !backlog.isEmpty {
      reduceBacklog(max: .max)
      hadPending = true
    }
    var batch = mailbox.flush(from: &spareBatch)
    if !batch.isEmpty { hadPending = true }
    reduceQueued(&batch)
    return hadPending
  }

  /// Adds `count` to the actions reduced, for ``metrics``.
  @inlinable @inline(__always)
  func countReduced(_ count: Int) {
    reducedCount.store(reducedCount.load(ordering: .relaxed) &+ count, ordering: .relaxed)
  }

  @inlinable @inline(__always)
  func noteReducedFromQueue(_ count: Int) {
    countReduced(count)
    mailbox.report(reduced: count)
  }

  /// Reduces `envelopes`, taken from the mailbox, starts their effects in
  /// their senders' lineages, counts them for the next report, and gives
  /// the emptied buffer back to the mailbox.
  @inlinable
  func reduceQueued(_ envelopes: inout [Envelope<Action>]) {
    reduceEnvelopes(envelopes)
    noteReducedFromQueue(envelopes.count)
    Mailbox.recycle(&envelopes, into: &spareBatch)
  }

  /// Reduces `envelopes` in order, and starts their effects in their
  /// senders' lineages.
  @inlinable
  func reduceEnvelopes(_ envelopes: some Collection<Envelope<Action>>) {
    // With no per-action observer nor middleware (the common case), skip
    // their checks per action: nothing registers in the middle of this
    // synchronous loop.
    if !hasMiddleware, !hasPerActionObservers, !isWatchingChildren, case .pure(let reduce) = reducer {
      runningUserCode { Self.reduceAll(envelopes, into: &currentState, with: reduce) }
    } else {
      for envelope in envelopes {
        var lineage = envelope.lineage
        reduce(envelope.action, lineage: &lineage)
        // The follow-up itself is done once its own effects have entered.
        envelope.lineage?.leave()
      }
    }
  }

  /// Reduces a pure reducer's batch in one tight loop, with no per-action
  /// observer or effect checks.
  @inlinable
  static func reduceAll(
    _ envelopes: some Collection<Envelope<Action>>,
    into state: inout State,
    with reduce: @Sendable (inout State, Action) -> Void
  ) {
    for envelope in envelopes {
      reduce(&state, envelope.action)
      envelope.lineage?.leave()
    }
  }

  /// Reduces `action`, then the actions its `.send` effects returned, and
  /// theirs, first in, first out, before anything else: one fixed order on
  /// every run. Asynchronous effects start in `lineage` (made on first need:
  /// a dispatch that starts none allocates nothing).
  @inlinable
  func reduce(_ action: Action, lineage: inout Lineage?) {
    reduceOne(action, lineage: &lineage)
    if !followUps.isEmpty { reduceFollowUps(lineage: &lineage) }
  }

  @inlinable
  func reduceFollowUps(lineage: inout Lineage?) {
    // Indexing, not iterating: reducing one appends the ones it returns.
    var index = 0
    while index < followUps.count {
      let action = followUps[index]
      index += 1
      reduceOne(action, lineage: &lineage)
    }
    countReduced(index)
    followUps.removeAll(keepingCapacity: true)
  }

  /// Runs the reducer and starts the effect it returns (unless
  /// `startingEffects` is `false`: a replay).
  @inlinable
  func apply(_ action: Action, lineage: inout Lineage?, startingEffects: Bool = true) {
    guard startingEffects else { return runningUserCode { reducer.replay(action, into: &currentState) } }
    switch reducer {
    case .pure(let reduce):
      runningUserCode { reduce(&currentState, action) }
    case .effectful(let reduce):
      let effect = runningUserCode { reduce(&currentState, action) }
      guard !effect.isNone else { return }
      start(effect, startedBy: action, lineage: &lineage)
    }
  }

  // MARK: - Re-entry

  /// Stops user code (a reducer, middleware, selector or comparison) that
  /// reached back into its own core, naming the call it made (`api`, the
  /// caller's name).
  @inlinable
  func checkNotRunningUserCode(_ api: StaticString = #function) {
    if isRunningUserCode {
      programmerError(
        """
        a reducer, middleware, selector, removeDuplicates closure or subscriber reached back into its own core \
        (through \(api)); they run inside the core and may only use the values they are given \
        (a subscriber or middleware may call send)
        """
      )
    }
  }

  /// Runs `body`, which calls user code, with `isRunningUserCode` set.
  @inlinable
  func runningUserCode<Result>(_ body: () -> Result) -> Result {
    checkNotRunningUserCode("a publication")
    isRunningUserCode = true
    defer { isRunningUserCode = false }
    return body()
  }
}
