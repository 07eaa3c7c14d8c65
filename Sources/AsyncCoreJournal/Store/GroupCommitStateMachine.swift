/// The writer's turns, as a pure state machine: requests wait while the
/// writer commits, and the next commit takes every one that waited.
///
/// Requests are known by their ids; the storage (AsyncCoreSQLite's
/// writer thread, AsyncCorePostgres's writer task) keeps what each asks and
/// its continuation, and acts on what each method returns. The writer asks
/// ``nextBatch()`` in a loop.
package struct GroupCommitStateMachine: Sendable {
  private enum State: Sendable {
    /// Nothing waits; the writer sleeps, or is about to.
    case idle
    /// Requests arrived while the writer slept: it was woken to take them.
    case woken(pending: [UInt64])
    /// The writer commits a batch; `pending` arrived since and go next.
    case committing(pending: [UInt64])
    /// Closed while requests remained: the writer commits them, then stops.
    case closing(pending: [UInt64])
    /// Closed, nothing left: the writer stops, requests are refused.
    case closed
  }

  private var state = State.idle

  package init() {}

  package enum SubmitAction: Equatable {
    /// Wake the writer: it sleeps.
    case wakeWriter
    /// The writer will take the request without a signal.
    case none
    /// The store is closed: fail the request.
    case refuse
  }

  /// A request `id` arrived.
  package mutating func submit(_ id: UInt64) -> SubmitAction {
    switch state {
    case .idle:
      state = .woken(pending: [id])
      return .wakeWriter
    case .woken(var pending):
      pending.append(id)
      state = .woken(pending: pending)
      return .none
    case .committing(var pending):
      pending.append(id)
      state = .committing(pending: pending)
      return .none
    case .closing, .closed:
      return .refuse
    }
  }

  package enum BatchAction: Equatable {
    /// Commit these requests, in this order, in one transaction.
    case commit([UInt64])
    /// Nothing to do: wait to be woken, then ask again.
    case sleep
    /// Closed and drained: close the database and end the thread.
    case stop
  }

  /// The writer is ready for more: after starting, after waking, and after
  /// each batch.
  package mutating func nextBatch() -> BatchAction {
    switch state {
    case .idle:
      // A wake-up that a batch already served: sleep again.
      return .sleep
    case .woken(let pending), .committing(let pending):
      if pending.isEmpty {
        state = .idle
        return .sleep
      }
      state = .committing(pending: [])
      return .commit(pending)
    case .closing(let pending):
      if pending.isEmpty {
        state = .closed
        return .stop
      }
      state = .closing(pending: [])
      return .commit(pending)
    case .closed:
      return .stop
    }
  }

  package enum CloseAction: Equatable {
    /// Signal the writer: it sleeps, and must wake to stop.
    case wakeWriter
    /// The writer is awake (or already stopping) and will see the close.
    case none
  }

  /// The store closes: what waits is still committed, nothing new is taken.
  package mutating func close() -> CloseAction {
    switch state {
    case .idle:
      state = .closed
      return .wakeWriter
    case .woken(let pending), .committing(let pending):
      state = .closing(pending: pending)
      return .none
    case .closing, .closed:
      return .none
    }
  }
}

extension GroupCommitStateMachine {
  /// ``nextBatch()``, with the waiters of a commit taken out of `waiting`,
  /// in the batch's order.
  package mutating func nextBatch<Waiter>(
    taking waiting: inout [UInt64: Waiter], module: StaticString
  ) -> (BatchAction, [Waiter]) {
    let action = nextBatch()
    guard case .commit(let ids) = action else { return (action, []) }
    let waiters = ids.map { id in
      guard let waiter = waiting.removeValue(forKey: id) else {
        fatalError("\(module): the writer was handed request \(id), which no caller waits for")
      }
      return waiter
    }
    return (action, waiters)
  }
}
