// A core made with a journal (issue 22's core integration, a spike: the
// hook is `package`, not API). Under a journal every action goes through the
// mailbox, and only the journaled drain reduces: it takes what the mailbox
// holds, awaits the journal's append of it off the core, reduces it, then
// resumes the dispatchers waiting on those actions. So the journal's order is
// the reduction order, and one append (one fdatasync under the every-action
// policy) covers every producer that queued before the take.

/// What a journaled core hands each slice to before reducing it.
package struct CoreJournalHook<Action: Sendable>: Sendable {
  /// Makes `actions` durable per the journal's policy, in call order; throws
  /// if none of them was written (the file layer cuts back to its last whole
  /// record).
  package let append: @Sendable ([Action]) async throws -> Void

  package init(append: @escaping @Sendable ([Action]) async throws -> Void) {
    self.append = append
  }
}

/// The journal a core was attached to, and the dispatchers waiting for
/// their action to be journaled and reduced (keyed by their lineage, which
/// their envelope carries).
@usableFromInline
struct CoreJournalBinding<Action: Sendable> {
  let hook: CoreJournalHook<Action>
  var waiters: [ObjectIdentifier: CheckedContinuation<Void, any Error>] = [:]
}

extension Core {
  /// Attaches `hook`: from now on only the journaled drain reduces. Call once,
  /// right after `replayJournal(_:)`, before the core is handed to anyone.
  package func attachJournal(_ hook: CoreJournalHook<Action>) {
    if journal != nil { programmerError("Core.attachJournal: the core already has a journal") }
    journal = CoreJournalBinding(hook: hook)
  }

  /// Reduces actions recovered from a journal into the state, with effects
  /// discarded: an asynchronous effect's follow-ups are in the log already.
  /// `.send` follow-ups are not journaled (they are part of reducing their
  /// action), so replay derives them again, in the live order.
  package func replayJournal(_ actions: some Sequence<Action>) {
    var count = 0
    switch reducer {
    case .pure(let reduce):
      for action in actions {
        runningUserCode { reduce(&currentState, action) }
        count += 1
      }
    case .effectful(let reduce):
      var pending: [Action] = []
      for action in actions {
        pending.append(action)
        var index = 0
        while index < pending.count {
          let next = pending[index]
          index += 1
          let effect = runningUserCode { reduce(&currentState, next) }
          Self.collectSynchronousSends(of: effect, into: &pending)
        }
        count += index
        pending.removeAll(keepingCapacity: true)
      }
    }
    countReduced(count)
  }

  /// The `.send` actions `effect` queues as follow-ups when it starts (see
  /// `start(_:startedBy:lineage:)`), in order; what runs asynchronously
  /// is left out.
  static func collectSynchronousSends(of effect: Effect<Action>, into pending: inout [Action]) {
    switch effect.operation {
    case .send(let action):
      pending.append(action)
    case .merge(let parts):
      for part in parts { collectSynchronousSends(of: part, into: &pending) }
    case .concatenate(let parts):
      guard effect.isSynchronous else { return }
      for part in parts { collectSynchronousSends(of: part, into: &pending) }
    case .cancellable(_, _, let inner):
      collectSynchronousSends(of: inner, into: &pending)
    case .none, .run, .cancel, .report:
      return
    }
  }

  /// Under a journal: queues `action` behind everything queued before it and
  /// returns once it is journaled and reduced, with a handle to its effects.
  /// Without one, `dispatch(_:)`.
  package func dispatchJournaled(_ action: Action) async throws -> EffectHandle {
    guard journal != nil else { return try dispatch(action) }
    guard lifecycle.acceptsOutsideActions else { throw CoreError.shutDown }
    checkNotRunningUserCode()
    let lineage = Lineage(registry: currentEffectContext().registry)
    lineage.enter()
    let key = ObjectIdentifier(lineage)
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      journal?.waiters[key] = continuation
      // Spike: a full bounded mailbox refuses here; the real thing waits
      // for room as `enqueue` does.
      let result = handle(mailbox.send(Envelope(action: action, lineage: lineage), fromEffect: false))
      if result != .accepted {
        journal?.waiters[key] = nil
        lineage.leave()
        continuation.resume(throwing: CoreError.shutDown)
      }
    }
    return EffectHandle(lineage: lineage)
  }

  /// The drain of a journaled core: take all the mailbox holds, await its
  /// append off the core, reduce it, resume its dispatchers. Nothing else
  /// reduces meanwhile (the flushes of `state`, `dispatch` and the rest do
  /// nothing under a journal), so the core stays free for other callers
  /// while the append waits for the disk.
  @usableFromInline
  func journaledDrain() async {
    while var batch = mailbox.takeBatch(from: &spareBatch, stayingScheduled: false, pendingIfOver: .max) {
      guard let hook = journal?.hook else { programmerError("Core.journaledDrain: no journal") }
      let actions = batch.map(\.action)
      do {
        try await hook.append(actions)
      } catch {
        failJournaled(batch, error: error)
        Mailbox.recycle(&batch, into: &spareBatch)
        continue
      }
      // The lineages' keys before reducing: reducing leaves them.
      let keys = batch.compactMap { $0.lineage.map(ObjectIdentifier.init) }
      reduceEnvelopes(batch)
      noteReducedFromQueue(batch.count)
      publishBatch()
      sliceCount.store(sliceCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
      for key in keys {
        journal?.waiters.removeValue(forKey: key)?.resume()
      }
      Mailbox.recycle(&batch, into: &spareBatch)
    }
  }

  /// A slice whose append failed: nothing of it is reduced; its dispatchers
  /// get the error, and each action sent without a waiter is reported.
  func failJournaled(_ batch: [Envelope<Action>], error: any Error) {
    mailbox.report(reduced: batch.count)
    for envelope in batch {
      if let lineage = envelope.lineage, let waiter = journal?.waiters.removeValue(forKey: ObjectIdentifier(lineage)) {
        waiter.resume(throwing: error)
      } else {
        diagnostics(EffectFailure(error: error, fileID: #fileID, line: #line))
      }
      envelope.lineage?.leave()
    }
  }
}
