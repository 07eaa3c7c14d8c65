// What a registry of entities asks of one entity's core: store its state
// and stop, or say why not.

/// How a passivation of a core ended.
package enum PassivationOutcome {
  /// The state is stored and the core has shut down.
  case passivated
  /// The core is in use (an effect in flight, an observer, something
  /// queued): it goes on as it was.
  case busy
  /// The snapshot failed; the core goes on as it was (its records hold
  /// every action it reduced).
  case failed(any Error)
  /// The core had already stopped (its journal failed): nothing to store.
  case stopped
}

extension Core {
  /// Stores the state in the journal's snapshot and shuts the core down,
  /// if nothing uses it: no effect in flight, nothing queued and at most
  /// `observers` observers (those the registry's activation hook added).
  ///
  /// With `waitingForEffects`, the registry's shutdown: effects run to
  /// their end first, observers do not count (their streams end with the
  /// core), and a failed snapshot still shuts the core down (its records
  /// hold what it reduced).
  package func passivate(observers: Int, waitingForEffects: Bool) async -> PassivationOutcome {
    guard lifecycle.acceptsOutsideActions else {
      await shutdown()
      return .stopped
    }
    if waitingForEffects {
      await settle(cancellable: false)
    } else {
      await catchUpQueued()
      guard effects.inFlight == 0, !mailbox.hasPending, observerCounter.value.load(ordering: .relaxed) <= observers
      else { return .busy }
    }
    if let driver = journal {
      do {
        try await acquireJournalTurn()
      } catch {
        await shutdown()
        return .stopped
      }
      do {
        try await driver.journal.snapshot(currentState)
        releaseJournalTurn()
      } catch {
        releaseJournalTurn()
        guard waitingForEffects else { return .failed(error) }
        await shutdown()
        return .failed(error)
      }
    }
    await shutdown()
    return .passivated
  }
}

extension Core {
  /// Queues what an entity was sent while it was not active, ahead of
  /// anything sent after: never refused for room (the registry bounded it).
  package nonisolated func sendWaiting(_ actions: [Action]) -> SendResult {
    handle(mailbox.send(contentsOf: actions.map { Envelope(action: $0, lineage: nil) }, fromInside: true))
  }
}
