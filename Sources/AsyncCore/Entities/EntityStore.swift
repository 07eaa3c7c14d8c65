/// Where a registry of entities keeps their states while they are passive:
/// one journal per entity, all in one store.
///
/// ```swift
/// import AsyncCoreSQLite
///
/// let store = try SQLiteEntityStore<String, Cart, CartAction>(path: "/var/lib/carts.sqlite")
/// let carts = Entities(store: store, initialState: { Cart(owner: $0) }, reducer: cartReducer)
/// ```
///
/// AsyncCoreSQLite's `SQLiteEntityStore` keeps every entity in one SQLite
/// database. Another storage engine conforms to this protocol; the registry
/// calls it as follows:
///
/// 1. When an entity activates: ``journal(for:)``, whose journal the
///    entity's ``Core`` then recovers from and writes to, as a durable
///    core does (``CoreJournal``). The registry never opens an id's
///    journal while the last one it opened for that id is still open.
/// 2. When it passivates: the journal's ``CoreJournal/snapshot(_:)`` with
///    the entity's state, then ``CoreJournal/close()``.
/// 3. Every ``syncInterval`` on the registry's clock, and when asked:
///    ``sync()``.
/// 4. Once, when the registry has shut down: ``close()``.
///
/// Journals of different entities are called concurrently: a store
/// gathers their appends into shared commits.
public protocol EntityStore<ID, State, Action>: Sendable {
  /// The ids of the entities.
  ///
  /// ```swift
  /// typealias ID = String
  /// ```
  associatedtype ID: Hashable & Sendable
  /// The entities' state.
  ///
  /// ```swift
  /// typealias State = Cart
  /// ```
  associatedtype State: Sendable
  /// The entities' actions.
  ///
  /// ```swift
  /// typealias Action = CartAction
  /// ```
  associatedtype Action: Sendable

  /// The journal of entity `id`, holding what the store has of it: its
  /// snapshot and the records after it, or nothing for a new id.
  ///
  /// ```swift
  /// let journal = try await store.journal(for: "ada")
  /// ```
  ///
  /// - Throws: Why the entity cannot be read, such as damage to its rows.
  ///   The registry refuses that entity alone.
  func journal(for id: ID) async throws -> any CoreJournal<State, Action>

  /// How often the registry calls ``sync()``; `nil` if the store syncs
  /// each commit itself, or leaves it to the operating system.
  ///
  /// ```swift
  /// let interval = store.syncInterval   // .seconds(1) under .interval(.seconds(1))
  /// ```
  var syncInterval: Duration? { get }

  /// Makes every record committed so far survive a power loss.
  ///
  /// ```swift
  /// try await store.sync()
  /// ```
  func sync() async throws

  /// The store's ownership figures, if it shares its entities with other
  /// processes; `nil`, the default, if it does not.
  ///
  /// ```swift
  /// print(store.ownership?.owned)
  /// ```
  var ownership: EntityOwnershipMetrics? { get }

  /// Releases the store, once no entity's journal is open.
  ///
  /// ```swift
  /// await store.close()
  /// ```
  func close() async
}

extension EntityStore {
  /// `nil`: a store of one process owns every entity it has.
  ///
  /// ```swift
  /// print(store.ownership)   // nil
  /// ```
  public var ownership: EntityOwnershipMetrics? { nil }
}
