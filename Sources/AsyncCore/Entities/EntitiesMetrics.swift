/// A registry's figures, for a service's metrics endpoint.
///
/// ```swift
/// let figures = carts.metrics
/// print(figures.active, figures.activations, figures.waitingCallers)
/// ```
public struct EntitiesMetrics: Sendable, Hashable {
  /// Entities active now, activating included.
  ///
  /// ```swift
  /// print(carts.metrics.active)
  /// ```
  public let active: Int
  /// Activations finished since the registry was made.
  ///
  /// ```swift
  /// print(carts.metrics.activations)
  /// ```
  public let activations: Int
  /// Passivations finished since the registry was made.
  ///
  /// ```swift
  /// print(carts.metrics.passivations)
  /// ```
  public let passivations: Int
  /// Activations that failed (the store could not read the entity).
  ///
  /// ```swift
  /// print(carts.metrics.activationFailures)
  /// ```
  public let activationFailures: Int
  /// Passivations whose snapshot failed (the entity stayed active).
  ///
  /// ```swift
  /// print(carts.metrics.passivationFailures)
  /// ```
  public let passivationFailures: Int
  /// The time every finished activation took, summed, on the registry's
  /// clock: divided by ``activations``, the mean.
  ///
  /// ```swift
  /// print(carts.metrics.activationTime)
  /// ```
  public let activationTime: Duration
  /// Callers waiting for an entity to activate or passivate.
  ///
  /// ```swift
  /// print(carts.metrics.waitingCallers)
  /// ```
  public let waitingCallers: Int
  /// The store's ownership of entities, for a store that shares them with
  /// other processes (`PostgresEntityStore`); `nil` for any other store,
  /// and in memory.
  ///
  /// ```swift
  /// if let ownership = carts.metrics.ownership { print(ownership.owned, ownership.handovers) }
  /// ```
  public let ownership: EntityOwnershipMetrics?
}

/// What a store that shares entities with other processes reports of its
/// ownership of them: each entity is active in one process at a time.
///
/// ```swift
/// let ownership = carts.metrics.ownership
/// print(ownership?.owned, ownership?.ownedElsewhere, ownership?.handovers, ownership?.fencingRefusals)
/// ```
public struct EntityOwnershipMetrics: Sendable, Hashable {
  /// Entities this store holds now.
  ///
  /// ```swift
  /// print(carts.metrics.ownership?.owned)
  /// ```
  public let owned: Int
  /// Activations refused because another store held the entity.
  ///
  /// ```swift
  /// print(carts.metrics.ownership?.ownedElsewhere)
  /// ```
  public let ownedElsewhere: Int
  /// Entities whose ownership ended without a passivation, with the
  /// connection it lived on: handed over, since another store may take them.
  ///
  /// ```swift
  /// print(carts.metrics.ownership?.handovers)
  /// ```
  public let handovers: Int
  /// Appends refused because another writer had taken their sequence
  /// number: a history kept from forking.
  ///
  /// ```swift
  /// print(carts.metrics.ownership?.fencingRefusals)
  /// ```
  public let fencingRefusals: Int

  /// Figures a store reports as its ``EntityStore/ownership``.
  ///
  /// ```swift
  /// let none = EntityOwnershipMetrics(owned: 0, ownedElsewhere: 0, handovers: 0, fencingRefusals: 0)
  /// ```
  public init(owned: Int, ownedElsewhere: Int, handovers: Int, fencingRefusals: Int) {
    self.owned = owned
    self.ownedElsewhere = ownedElsewhere
    self.handovers = handovers
    self.fencingRefusals = fencingRefusals
  }
}
