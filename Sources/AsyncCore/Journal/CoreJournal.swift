/// A durable log that a ``Core`` writes every action it reduces to, and
/// recovers its state from when it is made again.
///
/// Give a core a journal when you make it, and the core is durable:
///
/// ```swift
/// import AsyncCoreJournal
///
/// let journal = try FileJournal<Orders, OrderAction>(directory: "/var/lib/orders")
/// let orders = try await Core(initialState: Orders(), journal: journal, reducer: reduceOrders)
/// try await orders.dispatch(.place(order))   // on disk, then it returns
/// ```
///
/// AsyncCoreJournal's `FileJournal` is the journal on files. Another
/// storage engine conforms to this protocol; the core calls it as follows,
/// never two calls at once:
///
/// 1. Once, when the core is made: ``recoverState()``, then
///    ``recoverActions()`` until it returns `nil`.
/// 2. For each action about to be reduced, on the core: ``encode(_:)``.
/// 3. Once per slice of reduced actions: ``append(_:)`` with their records,
///    in order; nothing outside the core sees the slice before it returns.
/// 4. When ``append(_:)`` said one is due: ``snapshot(_:)``.
/// 5. Every ``syncInterval`` on the core's clock, when records were
///    appended since the last sync, and when asked (``Core/sync()``):
///    ``sync()``.
/// 6. Once, when the core shuts down: ``close()``.
///
/// What a journal holds is the actions as the reducer got them: after
/// middleware, with the follow-ups of effects (`.send` ones too), in the
/// order they were reduced. Recovery reduces exactly those, and starts no
/// effect.
public protocol CoreJournal<State, Action>: AnyObject, Sendable {
  /// The state the journal's snapshots hold.
  ///
  /// ```swift
  /// typealias State = Orders
  /// ```
  associatedtype State: Sendable
  /// The actions its records hold.
  ///
  /// ```swift
  /// typealias Action = OrderAction
  /// ```
  associatedtype Action: Sendable

  /// How often the core calls ``sync()`` on its clock; `nil` when
  /// ``append(_:)`` is as durable as the journal promises when it returns.
  ///
  /// ```swift
  /// var syncInterval: Duration? { .milliseconds(50) }
  /// ```
  var syncInterval: Duration? { get }

  /// The state of the newest snapshot, or `nil` for none (the core then
  /// starts from its `initialState`).
  ///
  /// ```swift
  /// func recoverState() async throws -> Orders? { try snapshots.newest().map(decode) }
  /// ```
  func recoverState() async throws -> State?

  /// The next actions recorded after that snapshot, in order, or `nil`
  /// once there are no more. A batch is what the core holds at once, so a
  /// long journal recovers in bounded memory.
  ///
  /// ```swift
  /// func recoverActions() async throws -> [OrderAction]? { try cursor.next(limit: 4_096) }
  /// ```
  func recoverActions() async throws -> [Action]?

  /// The record for `action`, which the reducer gets next. Called on the
  /// core, so it must not wait. Throwing refuses the action: it is not
  /// reduced, and its sender (or the diagnostics handler) gets the error.
  ///
  /// ```swift
  /// func encode(_ action: OrderAction) throws -> [UInt8] { try codec.encode(action) }
  /// ```
  func encode(_ action: Action) throws -> [UInt8]

  /// Appends `records` after every record appended before, and returns once
  /// they are as durable as the journal promises; returns whether a
  /// snapshot is due. Throwing means the records may not be in the
  /// journal: the core shuts down, and the slice's senders get the error.
  ///
  /// ```swift
  /// func append(_ records: [[UInt8]]) async throws -> Bool {
  ///   try await file.write(records)
  ///   return file.recordsSinceSnapshot >= 10_000
  /// }
  /// ```
  func append(_ records: [[UInt8]]) async throws -> Bool

  /// Writes `state`, the state once every record appended so far is
  /// reduced, as a snapshot. A failure is reported to the core's
  /// diagnostics handler; the journal stays usable.
  ///
  /// ```swift
  /// func snapshot(_ state: Orders) async throws { try await file.writeSnapshot(codec.encode(state)) }
  /// ```
  func snapshot(_ state: State) async throws

  /// Makes every record appended before the call durable.
  ///
  /// ```swift
  /// func sync() async throws { try await file.sync() }
  /// ```
  func sync() async throws

  /// Syncs and releases the journal; the core calls nothing after it.
  ///
  /// ```swift
  /// func close() async { await file.close() }
  /// ```
  func close() async
}
