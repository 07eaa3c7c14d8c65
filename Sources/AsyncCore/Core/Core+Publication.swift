import Synchronization

// Publication: the per-action observers (every-state observers and the
// action log) after each action, the latest-value observers once per batch.
// Selectors and comparisons run here, inside the core, before anyone is
// woken; they are user code, so they run with the re-entry guard set.
extension Core {
  /// Whether an every-state observer, an action log or a recorder is
  /// registered: then each action is published on its own.
  @inlinable
  var hasPerActionObservers: Bool { observers.hasPerActionObservers }

  /// Passes one action through the middleware, if any, then reduces it.
  @inlinable
  func reduceOne(_ action: Action, lineage: inout Lineage?) {
    if hasMiddleware {
      reduceThroughMiddleware(action, lineage: &lineage)
      return
    }
    reduceOneAfterMiddleware(action, lineage: &lineage)
  }

  /// Reduces one action and publishes it to the per-action observers.
  /// Handles on children that can leave the state learn here, after the
  /// action, if theirs has left (see `checkWatchedChildren`).
  /// `startingEffects` is `false` only for ``replay(_:)``, which drops
  /// what the reducer returns.
  @inlinable
  func reduceOneAfterMiddleware(_ action: Action, lineage: inout Lineage?, startingEffects: Bool = true) {
    guard observers.hasObservers else {
      apply(action, lineage: &lineage, startingEffects: startingEffects)
      if isWatchingChildren { checkWatchedChildren() }
      return
    }
    // The state before is copied only while an action log or an observer
    // of a child that can leave the state is registered.
    let before = observers.actionObservers.isEmpty && observers.endingSubscriptions.isEmpty ? nil : currentState
    if !observers.endingSubscriptions.isEmpty, let book = scopeBook {
      book.stateBeforeAction = before
      apply(action, lineage: &lineage, startingEffects: startingEffects)
      if isWatchingChildren { checkWatchedChildren() }
      book.stateBeforeAction = nil
    } else {
      apply(action, lineage: &lineage, startingEffects: startingEffects)
      if isWatchingChildren { checkWatchedChildren() }
    }
    if let before, !observers.actionObservers.isEmpty {
      let record = ActionRecord(action: action, stateBefore: before, stateAfter: currentState)
      if isHoldingForJournal {
        journal?.heldDeliveries.append(.record(record))
      } else {
        for sink in observers.actionObservers { sink.deliver(record) }
      }
    }
    guard !observers.everyStateSubscriptions.isEmpty else { return }
    if isHoldingForJournal {
      journal?.heldDeliveries.append(.state(currentState))
    } else {
      publish(to: observers.everyStateSubscriptions)
    }
  }

  /// Publishes the state after a drained batch (or the actions a caller
  /// flushed): synchronous subscribers, then latest-value observers.
  @inlinable
  func publishBatch() {
    guard observers.hasObservers else { return }
    publishToSubscribers()
    publishDue()
  }

  /// What every publication after reducing begins with: drop ended
  /// registrations, call the latest-value synchronous subscribers.
  @inlinable
  func publishToSubscribers() {
    removeEndedObservers()
    if !observers.latestSubscribers.isEmpty { publish(to: observers.latestSubscribers) }
  }

  /// Publishes the state to latest-value observers, and marks nothing due.
  @inlinable
  func publishDue() {
    drainMachine.published()
    guard !observers.latestSubscriptions.isEmpty else { return }
    publish(to: observers.latestSubscriptions)
  }

  /// After `dispatch`: synchronous subscribers are called now, before it
  /// returns. Latest-value observers are published now too when no
  /// publication window is open (the first dispatch after a quiet spell:
  /// its observers wake at once); while one is open (dispatches coming back
  /// to back), the drain publishes the state they leave, once for many.
  @inlinable
  func publishAfterDispatch() {
    guard observers.hasObservers else { return }
    publishToSubscribers()
    guard !observers.latestSubscriptions.isEmpty else { return }
    switch drainMachine.dispatched() {
    case .leaveToDrain:
      return
    case .publishAndScheduleDrain:
      publishDue()
      // The drain closes the window at its first look that finds no new
      // dispatch.
      _ = handle(mailbox.scheduleDrain())
    }
  }

  /// Publishes the current state to `subscriptions`, whose selectors and
  /// comparisons run with the re-entry guard set.
  @inlinable
  func publish(to subscriptions: [Subscription<State>]) {
    publish(currentState, to: subscriptions)  // one exclusive read, not one per observer
  }

  /// Publishes `state` to `subscriptions`.
  @inlinable
  func publish(_ state: State, to subscriptions: [Subscription<State>]) {
    runningUserCode {
      subscriptions.withUnsafeBufferPointer { entries in
        for index in entries.indices { entries[index].publish(state) }
      }
    }
  }

  /// Drops observers and subscribers whose consumers have ended (see
  /// `ObserverRegistry.removeEnded()`), and the scoped groups they leave
  /// empty. Costs one atomic load when nobody has left.
  @inlinable
  func removeEndedObservers() {
    guard observers.hasEnded(counting: observerCounter) else { return }
    observers.removeEnded()
    scopeBook?.forgetEndedGroups()
  }

  /// Drops ended registrations now, as an ended subscriber asks.
  func pruneEndedObservers() {
    observerCounter.beginPrune()
    removeEndedObservers()
  }

  /// Ends every observer's loop after what it has not taken yet.
  func finishObservers() {
    observers.finishAndRemoveAll()
  }
}
