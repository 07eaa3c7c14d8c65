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
}
