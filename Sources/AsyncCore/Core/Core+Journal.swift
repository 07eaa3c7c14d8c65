// A core on a journal: what AsyncCoreJournal's `JournaledCore` is made of.
// The hook is `package`: AsyncCore stays free of Foundation and of the file
// layer, and the only public way to a journaled core is `JournaledCore`,
// whose `dispatch` and `state` wait for the disk (Core's own are synchronous
// on the actor and cannot).
//
// Under a journal every action goes through the mailbox, and only the
// journaled drain reduces: it takes what the mailbox holds, awaits the
// journal's append of it off the core, reduces it, then resumes the
// dispatchers and readers waiting on it. So the journal's order is the
// reduction order, and one append (one fdatasync under the every-action
// policy) covers every producer that queued before the take: group commit.

/// What a journaled core hands its actions to, before reducing them.
package struct CoreJournalHook<State: Sendable, Action: Sendable>: Sendable {
  /// Appends `actions` in order, durable per the journal's policy when it
  /// returns. Returns the positions (ascending) of the actions it refused
  /// one by one, with why (an action its codec cannot encode): those are
  /// not in the journal. Throws if none was written (the file layer cuts
  /// back to its last whole record).
  package let append: @Sendable ([Action]) async throws -> [(index: Int, error: any Error)]
  /// Writes `state`, the state once every action appended so far is
  /// reduced, as a snapshot; ordered after the appends before it and
  /// before the next. Never throws: it reports its own failures.
  package let snapshot: @Sendable (State) -> Void
  /// Actions appended between two snapshots; `Int.max` for none.
  package let snapshotEvery: Int
  /// Told of each action nobody waits on (a `send`, an effect's follow-up)
  /// that was not journaled, and so not reduced.
  package let notJournaled: @Sendable (Action, any Error) -> Void

  package init(
    snapshotEvery: Int,
    append: @escaping @Sendable ([Action]) async throws -> [(index: Int, error: any Error)],
    snapshot: @escaping @Sendable (State) -> Void,
    notJournaled: @escaping @Sendable (Action, any Error) -> Void
  ) {
    self.append = append
    self.snapshot = snapshot
    self.snapshotEvery = snapshotEvery
    self.notJournaled = notJournaled
  }
}

/// The journal a core was attached to, with who waits on the drain. A
/// class, so that a core without a journal holds one `nil` pointer (as a
/// struct it made every idle core 80 bytes larger). Only the core, on its
/// actor, touches it.
@usableFromInline
final class CoreJournalBinding<State: Sendable, Action: Sendable> {
  let hook: CoreJournalHook<State, Action>
  /// Dispatchers waiting for their action to be journaled and reduced,
  /// keyed by their lineage (which their envelope carries). Resumed with
  /// the append's error when it was not journaled.
  var dispatchers: [ObjectIdentifier: CheckedContinuation<Void, any Error>] = [:]
  /// Readers waiting for the drain to pass a position: the number of
  /// actions accepted when they asked. Positions never decrease (see
  /// `journalPosition`), so the array is in order and is resumed from the
  /// front; a reader never leaves early (the drain always gets there), so
  /// none is looked up by id.
  var readers: [(position: Int, continuation: CheckedContinuation<Void, Never>)] = []
  /// Actions the drain has taken and dealt with: reduced, or failed.
  var passed = 0
  /// Actions appended since the last snapshot (or the recovered ones).
  var sinceSnapshot: Int

  init(hook: CoreJournalHook<State, Action>, sinceSnapshot: Int) {
    self.hook = hook
    self.sinceSnapshot = sinceSnapshot
  }
}

extension Core {
  /// Attaches `hook`: from now on only the journaled drain reduces. Call
  /// once, right after `replayJournal(_:)`, before the core is handed to
  /// anyone; `sinceSnapshot` is the number of records replayed.
  package func attachJournal(_ hook: CoreJournalHook<State, Action>, sinceSnapshot: Int) {
    if journal != nil { programmerError("Core.attachJournal: the core already has a journal") }
    journal = CoreJournalBinding(hook: hook, sinceSnapshot: sinceSnapshot)
  }

  /// Reduces actions recovered from a journal into the state, with effects
  /// discarded: an asynchronous effect's follow-ups are in the log already.
  /// `.send` follow-ups are not journaled (they are part of reducing their
  /// action), so replay derives them again, in the live order: an action,
  /// then its `.send`s and theirs, first in, first out.
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

  /// Queues `action` behind everything queued before it and returns once
  /// it is journaled and reduced, with a handle to its effects. It takes no
  /// room in a bounded mailbox (the caller waits, so it holds one place at
  /// most, as a `dispatch` does).
  ///
  /// - Throws: `CoreError.shutDown` if the core refused it; the append's
  ///   error if it was not journaled (then it was not reduced).
  package func dispatchJournaled(_ action: Action) async throws -> EffectHandle {
    guard journal != nil else { programmerError("Core.dispatchJournaled: the core has no journal") }
    checkNotRunningUserCode()
    let lineage = Lineage(registry: currentEffectContext().registry)
    lineage.enter()
    let key = ObjectIdentifier(lineage)
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      // Registered before the send: the drain cannot pass the action first.
      journal?.dispatchers[key] = continuation
      let result = handle(mailbox.send(Envelope(action: action, lineage: lineage), fromEffect: false, fromInside: true))
      if result != .accepted {
        journal?.dispatchers[key] = nil
        lineage.leave()
        continuation.resume(throwing: CoreError.shutDown)
      }
    }
    return EffectHandle(lineage: lineage)
  }

  /// The state once every action accepted before the call is journaled and
  /// reduced (or failed): a task reads its own writes.
  package func journaledState() async -> State {
    checkNotRunningUserCode()
    await awaitJournalPosition()
    return currentState
  }

  /// Reduces what is queued before the caller goes on: at once, or under a
  /// journal (where only its drain reduces) by waiting for the drain to
  /// pass it. What `settle` and `stop` do at each turn.
  func catchUpQueued() async {
    if journal != nil { await awaitJournalPosition() } else { flushMailbox() }
  }

  /// How many actions the mailbox has accepted so far: those the drain
  /// passed, and those it holds (its depth counts an action until the
  /// drain reports it, which it does as it counts it passed).
  func journalPosition() -> Int {
    (journal?.passed ?? 0) + mailbox.figures.depth
  }

  /// Returns once the journaled drain has passed every action accepted
  /// before the call.
  func awaitJournalPosition() async {
    let position = journalPosition()
    guard let passed = journal?.passed, passed < position else { return }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      journal?.readers.append((position, continuation))
    }
  }

  /// The drain of a journaled core: take all the mailbox holds and, a
  /// slice (``drainSlice`` actions) at a time, await its append off the
  /// core, reduce it, publish, resume its dispatchers and readers. Nothing
  /// else reduces meanwhile (the flushes of `settle` and the rest do
  /// nothing under a journal), so the core stays free for other callers
  /// while the append waits for the disk, and no slice holds it longer than
  /// reducing `drainSlice` actions.
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

  /// Before the next take, after resuming `resumed` dispatchers: lets them
  /// queue their next action, so that the next append carries theirs too.
  /// Without it, dispatchers split into two groups that take turns, each
  /// append carrying one (measured: 16 producers, 8 actions an append).
  /// It yields the core while the mailbox grows, until it holds as many
  /// more as were resumed, or two turns pass with nothing new (at most 64).
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

  /// Appends `slice`, then reduces what was journaled of it; returns how
  /// many dispatchers it resumed.
  func journalSlice(_ slice: ArraySlice<Envelope<Action>>) async -> Int {
    guard let hook = journal?.hook else { programmerError("Core.journaledDrain: no journal") }
    let actions = slice.map(\.action)
    var refused: [(index: Int, error: any Error)]
    do {
      refused = try await hook.append(actions)
    } catch {
      refused = actions.indices.map { ($0, error) }
    }
    // The dispatchers' keys before reducing: reducing leaves lineages.
    let keys = slice.map { $0.lineage.map(ObjectIdentifier.init) }
    var journaled = slice.count
    if refused.isEmpty {
      reduceEnvelopes(slice)
    } else {
      journaled = reduceJournaled(Array(slice), refusing: refused, keys: keys, hook: hook)
    }
    countReduced(journaled)
    mailbox.report(reduced: slice.count)
    publishBatch()
    sliceCount.store(sliceCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    var resumed = 0
    for case let key? in keys {
      guard let dispatcher = journal?.dispatchers.removeValue(forKey: key) else { continue }
      dispatcher.resume()
      resumed += 1
    }
    passJournal(slice.count, journaled: journaled)
    return resumed
  }

  /// A take of which some actions were not journaled: reduces the others
  /// in order; each refused one is not reduced, its dispatcher gets the
  /// error, or the hook is told when nobody waits on it. Returns how many
  /// were reduced.
  func reduceJournaled(
    _ batch: [Envelope<Action>], refusing refused: [(index: Int, error: any Error)],
    keys: [ObjectIdentifier?], hook: CoreJournalHook<State, Action>
  ) -> Int {
    var start = 0
    for (index, error) in refused {
      reduceEnvelopes(batch[start..<index])
      let envelope = batch[index]
      if let key = keys[index], let dispatcher = journal?.dispatchers.removeValue(forKey: key) {
        dispatcher.resume(throwing: error)
      } else {
        hook.notJournaled(envelope.action, error)
      }
      envelope.lineage?.leave()
      start = index + 1
    }
    reduceEnvelopes(batch[start...])
    return batch.count - refused.count
  }

  /// Counts `count` taken actions dealt with, of which `journaled` were
  /// appended; resumes the readers the drain has now passed, and hands a
  /// snapshot to the hook when one is due.
  func passJournal(_ count: Int, journaled: Int) {
    guard let (snapshotDue, ready) = journal?.pass(count, journaled: journaled) else { return }
    if snapshotDue, let hook = journal?.hook { hook.snapshot(currentState) }
    for continuation in ready { continuation.resume() }
  }
}

extension CoreJournalBinding {
  /// Counts `count` taken actions dealt with, `journaled` of them appended;
  /// returns whether a snapshot is due, and the readers now passed (taken
  /// out, to resume).
  func pass(_ count: Int, journaled: Int) -> (snapshotDue: Bool, ready: [CheckedContinuation<Void, Never>]) {
    passed += count
    sinceSnapshot += journaled
    let snapshotDue = sinceSnapshot >= hook.snapshotEvery
    if snapshotDue { sinceSnapshot = 0 }
    var resumed = 0
    while resumed < readers.count, readers[resumed].position <= passed { resumed += 1 }
    guard resumed > 0 else { return (snapshotDue, []) }
    let ready = readers.prefix(resumed).map(\.continuation)
    readers.removeFirst(resumed)
    return (snapshotDue, ready)
  }
}
