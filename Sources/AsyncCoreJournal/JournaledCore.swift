import AsyncCore
import Dispatch
import Synchronization

/// A core whose every action is written to a journal on disk before it is
/// reduced, and which recovers its exact state when it is opened again:
/// after a restart, a crash or a `kill -9`.
///
/// ```swift
/// let orders = try await JournaledCore(
///   directory: "/var/lib/orders/journal", initialState: Orders(), reducer: reduceOrders)
/// try await orders.dispatch(.place(order))   // on disk, then reduced
/// print(await orders.state.total)
/// await orders.shutdown()
/// ```
///
/// Its `State` and `Action` are `Codable`; the codec is pluggable
/// (``JSONJournalCodec`` by default). It is its own type, not an option of
/// `Core`, because its ``dispatch(_:)`` and ``state`` wait for the disk,
/// where `Core`'s are synchronous on the actor.
///
/// **What each call promises** (the journal's ``JournalDurability``):
/// - ``dispatch(_:)`` returns once its action is appended, synced as the
///   policy says, and reduced. Under ``JournalDurability/everyAction`` that
///   means on disk; concurrent dispatchers share one `fdatasync` (group
///   commit). If the append fails, it throws and the action is not reduced.
/// - ``send(_:)`` and ``enqueue(_:)`` return once the action is *queued*,
///   as on a `Core`: `SendResult.accepted` does not mean on disk. An
///   action of theirs that cannot be appended is not reduced and is
///   reported to the diagnostics handler (``JournalDiagnostic/notJournaled(action:error:)``).
/// - Effects' follow-up actions are journaled like any other. A `.send`
///   effect's action is part of reducing the action that returned it, and
///   is derived again on recovery.
///
/// **Recovery.** Opening loads the newest valid snapshot and reduces the
/// records after it, with effects not started (what they sent is in the
/// journal). An effect in flight at a crash is not run again: effects are
/// at most once. A torn or damaged tail is moved aside, never deleted, and
/// reported (``JournalDiagnostic/damageMovedAside(_:)``); a journal of other
/// types or another schema version is refused with
/// ``JournaledCoreError/journal(_:)`` carrying
/// ``JournalError/incompatible(path:expected:found:)``, never reset.
///
/// Middleware and scoped handles are not offered: the journal holds the
/// actions as sent, and recovery reduces exactly those.
public final class JournaledCore<State: Sendable & Codable, Action: Sendable & Codable>: Sendable {
  /// The core the journal feeds; never handed out (its `dispatch` and
  /// `state` do not wait for the journal).
  let core: Core<State, Action>
  let writer: JournalWriter<State, Action>

  /// What opening found: the snapshot it started from, the records it
  /// replayed and the damage it moved aside.
  ///
  /// ```swift
  /// print("replayed \(orders.recovery.recordsReplayed) orders")
  /// ```
  public let recovery: JournaledCoreRecovery

  /// Opens (or creates) the journal in `directory`, recovers the state it
  /// holds, and returns a core that journals every action before reducing it.
  ///
  /// ```swift
  /// let tally = try await JournaledCore(
  ///   directory: path, durability: .interval(.milliseconds(50)), snapshotEvery: 10_000,
  ///   initialState: Tally(), reducer: Reduce { state, action in state.apply(action) })
  /// ```
  ///
  /// - Parameters:
  ///   - directory: The journal's directory, created if missing; its parent
  ///     must exist (if not: `.journal(.fileSystem(operation: "mkdir", path:
  ///     directory, errno: ENOENT))`, and nothing is made). One core at a
  ///     time: a second opener, in this process or another, gets
  ///     `.journal(.locked(path: directory))`. Removed, moved or replaced
  ///     while the core runs: from the next append on, appends throw
  ///     `.journal(.directoryRemoved(path: directory))`.
  ///   - schemaVersion: Your version of `State` and `Action`'s encoding; a
  ///     journal written with another is refused.
  ///   - durability: When records reach the disk (see ``JournalDurability``);
  ///     an interval is at least 1 ms.
  ///   - snapshotEvery: Records between two snapshots of the state (each
  ///     lets the records before it go), or `nil` for no snapshots. At
  ///     least 1.
  ///   - codec: How actions and the state become bytes.
  ///   - initialState: The state when the journal has no snapshot.
  ///   - dependencies: As `Core`'s: what effects read.
  ///   - clock: As `Core`'s: the clock effects read time from.
  ///   - mailboxCapacity: As `Core`'s: bounds what `send` and `enqueue`
  ///     queue. `dispatch` is not held back by it (its caller waits
  ///     anyway), but it still queues behind what is there.
  ///   - diagnostics: Told of damage found, actions not journaled and
  ///     failed snapshots (as ``JournalDiagnostic`` errors), and of what a
  ///     `Core` reports.
  ///   - reducer: Reduces each action; it runs again on recovery, so it
  ///     must give the same state for the same actions.
  /// - Throws: ``JournaledCoreError/journal(_:)`` if the journal cannot be
  ///   opened (its ``JournalError/missingRecords(after:path:damagedSnapshots:)``
  ///   snapshots are also reported as ``JournalDiagnostic/damageMovedAside(_:)``);
  ///   ``JournaledCoreError/decodingFailed(sequence:description:)``
  ///   if a record cannot be decoded,
  ///   ``JournaledCoreError/snapshotDecodingFailed(sequence:description:)``
  ///   if the snapshot cannot.
  public init(
    directory: String,
    schemaVersion: Int = 1,
    durability: JournalDurability = .everyAction,
    snapshotEvery: Int? = 10_000,
    codec: some JournalCodec = JSONJournalCodec(),
    initialState: State,
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    mailboxCapacity: Int? = nil,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    reducer: Reduce<State, Action>
  ) async throws(JournaledCoreError) {
    if let snapshotEvery, snapshotEvery < 1 {
      programmerError(
        "JournaledCore(snapshotEvery: \(snapshotEvery)): snapshots need at least 1 record apart, or nil for none")
    }
    if case .interval(let interval) = durability, interval < .milliseconds(1) {
      programmerError(
        "JournaledCore(durability: .interval(\(interval))): the interval must be at least 1 ms; "
          + "use .everyAction to sync every append")
    }
    let identity = JournalIdentity(action: Action.self, state: State.self, schemaVersion: schemaVersion)
    let journal: Journal
    let recovered: JournalRecovery
    do {
      (journal, recovered) = try Journal.open(directory: directory, identity: identity, durability: durability)
    } catch {
      if case .missingRecords(_, _, let damagedSnapshots) = error {
        for damage in damagedSnapshots {
          diagnostics(EffectFailure(error: JournalDiagnostic.damageMovedAside(damage), fileID: #fileID, line: #line))
        }
      }
      throw .journal(error)
    }
    let state: State
    let actions: [Action]
    do {
      (state, actions) = try Self.decode(recovered, codec: codec, initialState: initialState)
    } catch {
      journal.close()
      throw error
    }
    for damage in recovered.damage {
      diagnostics(EffectFailure(error: JournalDiagnostic.damageMovedAside(damage), fileID: #fileID, line: #line))
    }
    core = Core(
      initialState: state, dependencies: dependencies, clock: clock, mailboxCapacity: mailboxCapacity,
      diagnostics: diagnostics, reducer: reducer)
    writer = JournalWriter(journal: journal, codec: codec, durability: durability, diagnostics: diagnostics)
    recovery = JournaledCoreRecovery(
      snapshotSequence: recovered.snapshot?.sequence, recordsReplayed: actions.count, damage: recovered.damage)
    // In slices, each its own turn on the core: a long journal does not
    // hold a thread of the cooperative pool for the whole replay.
    var start = 0
    while start < actions.count {
      let end = min(actions.count, start + 16_384)
      await core.replayJournal(actions[start..<end])
      start = end
    }
    await core.attachJournal(writer.hook(snapshotEvery: snapshotEvery ?? .max), sinceSnapshot: actions.count)
    writer.startSyncTimer()
  }

  /// Opens a journaled core whose reducer is a closure; see
  /// ``init(directory:schemaVersion:durability:snapshotEvery:codec:initialState:dependencies:clock:mailboxCapacity:diagnostics:reducer:)-(_,_,_,_,_,_,_,_,_,_,Reduce<State,Action>)``.
  ///
  /// ```swift
  /// let tally = try await JournaledCore(directory: path, initialState: 0) { (count: inout Int, add: Int) in
  ///   count += add
  ///   return .none
  /// }
  /// ```
  public convenience init(
    directory: String,
    schemaVersion: Int = 1,
    durability: JournalDurability = .everyAction,
    snapshotEvery: Int? = 10_000,
    codec: some JournalCodec = JSONJournalCodec(),
    initialState: State,
    dependencies: Dependencies = Dependencies(),
    clock: any Clock<Duration> = ContinuousClock(),
    mailboxCapacity: Int? = nil,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void = EffectFailure.writeToStandardError,
    reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>
  ) async throws(JournaledCoreError) {
    try await self.init(
      directory: directory, schemaVersion: schemaVersion, durability: durability, snapshotEvery: snapshotEvery,
      codec: codec, initialState: initialState, dependencies: dependencies, clock: clock,
      mailboxCapacity: mailboxCapacity, diagnostics: diagnostics, reducer: Reduce(reducer))
  }

  deinit {
    writer.stopSyncTimer()
  }

  /// The snapshot's state (or `initialState`) and the records' actions.
  private static func decode(
    _ recovered: JournalRecovery, codec: some JournalCodec, initialState: State
  ) throws(JournaledCoreError) -> (State, [Action]) {
    var state = initialState
    if let snapshot = recovered.snapshot {
      do {
        state = try codec.decode(State.self, from: snapshot.state)
      } catch {
        throw .snapshotDecodingFailed(sequence: snapshot.sequence, description: JournaledCoreError.bounded(error))
      }
    }
    var actions: [Action] = []
    actions.reserveCapacity(recovered.records.count)
    for record in recovered.records {
      do {
        actions.append(try codec.decode(Action.self, from: record.body))
      } catch {
        throw .decodingFailed(sequence: record.sequence, description: JournaledCoreError.bounded(error))
      }
    }
    return (state, actions)
  }

  // MARK: - Actions

  /// Journals `action`, reduces it, and returns a handle to the effects it
  /// started; under ``JournalDurability/everyAction`` it is on disk when
  /// this returns.
  ///
  /// ```swift
  /// try await orders.dispatch(.place(order))
  /// ```
  ///
  /// It waits behind every action queued before it. Once queued it is not
  /// cancellable: it returns when its action is journaled and reduced.
  ///
  /// - Throws: ``JournaledCoreError/shutDown`` if the core has shut down;
  ///   ``JournaledCoreError/journal(_:)`` or
  ///   ``JournaledCoreError/encodingFailed(description:)`` if it was not
  ///   journaled (``JournalError/recordTooLarge(bytes:limit:)`` for an
  ///   action over the record limit): then it was not reduced.
  @discardableResult
  public func dispatch(_ action: Action) async throws(JournaledCoreError) -> EffectHandle {
    do {
      return try await core.dispatchJournaled(action)
    } catch {
      throw .from(error)
    }
  }

  /// Queues `action` without waiting, as `Core.send(_:)`: `.accepted` means
  /// queued, not on disk. If it cannot be journaled, it is not reduced and
  /// the diagnostics handler is told.
  ///
  /// ```swift
  /// orders.send(.place(order))
  /// ```
  @discardableResult
  public func send(_ action: Action) -> SendResult {
    core.send(action)
  }

  /// Queues `actions` in order, all or none, as `Core.send(contentsOf:)`.
  ///
  /// ```swift
  /// orders.send(contentsOf: [.place(a), .place(b)])
  /// ```
  @discardableResult
  public func send(contentsOf actions: some Sequence<Action>) -> SendResult {
    core.send(contentsOf: actions)
  }

  /// Queues `action` once the bounded mailbox has room, as
  /// `Core.enqueue(_:)`: it returns once queued, not on disk.
  ///
  /// ```swift
  /// try await orders.enqueue(.place(order))
  /// ```
  ///
  /// - Throws: ``JournaledCoreError/shutDown`` if the core has shut down,
  ///   or `CancellationError` if the task was cancelled while it waited
  ///   (either way the action is not queued).
  public func enqueue(_ action: Action) async throws {
    do {
      try await core.enqueue(action)
    } catch CoreError.shutDown {
      throw JournaledCoreError.shutDown
    }
  }

  // MARK: - State

  /// The state once every action accepted before the call is journaled and
  /// reduced: a task reads its own writes.
  ///
  /// ```swift
  /// orders.send(.place(order))
  /// print(await orders.state.count)   // counts it (unless the disk refused it)
  /// ```
  public var state: State {
    get async { await core.journaledState() }
  }

  // MARK: - Effects and lifecycle

  /// Cancels the effects started with `id`, as `Core.cancelEffects(id:)`.
  ///
  /// ```swift
  /// await orders.cancelEffects(id: "sync")
  /// ```
  public func cancelEffects(id: some Hashable & Sendable) async {
    await core.cancelEffects(id: id)
  }

  /// Waits until every action sent is journaled and reduced and no effect
  /// is in flight, as `Core.waitUntilIdle()`.
  ///
  /// ```swift
  /// orders.send(.place(order))
  /// try await orders.waitUntilIdle()
  /// ```
  public func waitUntilIdle() async throws(CancellationError) {
    try await core.waitUntilIdle()
  }

  /// Syncs the journal now, whatever its policy: what was journaled before
  /// the call is on disk when it returns.
  ///
  /// ```swift
  /// try await orders.sync()   // before telling a peer it is durable
  /// ```
  ///
  /// - Throws: ``JournaledCoreError/shutDown`` once the core has shut
  ///   down (its journal is closed); ``JournaledCoreError/journal(_:)``
  ///   if the sync failed.
  public func sync() async throws(JournaledCoreError) {
    _ = await core.journaledState()
    do {
      try await writer.sync()
    } catch .journal(.closed) {
      // Only shutting down closes a journaled core's journal.
      throw .shutDown
    }
  }

  /// Ties the core to the calling task, as `Core.run()`: its effects run as
  /// child tasks of this call, and cancelling the task shuts the core down
  /// immediately. Once the core has shut down, syncs and closes the journal.
  ///
  /// ```swift
  /// try await withThrowingDiscardingTaskGroup { group in
  ///   group.addTask { try await orders.run() }   // until the service is cancelled
  ///   group.addTask { try await serveHTTP(orders) }
  /// }
  /// ```
  ///
  /// - Throws: `CoreError.alreadyRunning` if another `run()` of this core
  ///   is in progress.
  public func run() async throws(CoreError) {
    try await core.run()
    if core.hasShutDown { await writer.close() }
  }

  /// Stops the core as `Core.shutdown(_:)` does, then syncs and closes the
  /// journal, releasing its lock: another process may open it.
  ///
  /// ```swift
  /// await orders.shutdown()
  /// ```
  public func shutdown(_ mode: ShutdownMode = .graceful) async {
    await core.shutdown(mode)
    await writer.close()
  }
}

/// What opening a ``JournaledCore`` recovered.
///
/// ```swift
/// let recovery = orders.recovery
/// print(recovery.snapshotSequence ?? 0, recovery.recordsReplayed, recovery.damage.count)
/// ```
public struct JournaledCoreRecovery: Sendable, Hashable {
  /// The record the snapshot it started from covers through; `nil` when it
  /// started from `initialState`.
  ///
  /// ```swift
  /// if orders.recovery.snapshotSequence == nil { print("no snapshot yet") }
  /// ```
  public let snapshotSequence: UInt64?
  /// The records reduced after the snapshot.
  ///
  /// ```swift
  /// print("replayed \(orders.recovery.recordsReplayed) records")
  /// ```
  public let recordsReplayed: Int
  /// The damage moved aside (also reported to the diagnostics handler).
  ///
  /// ```swift
  /// for damage in orders.recovery.damage { print(damage.asidePath) }
  /// ```
  public let damage: [JournalDamage]
}
