import AsyncCore

/// The scene's second worker: the properties the user saved. Effects reach
/// it as `send.dependencies.favourites`.
///
/// ```swift
/// return .run { send in
///   try await send.dependencies.favourites.set(42, saved: true)
///   await send(.favouriteSaved(true))
/// }
/// ```
public protocol FavouritesStore: Sendable {
  /// Whether the property `id` is saved.
  func contains(_ id: Int) async throws -> Bool
  /// Saves the property `id`, or removes it when `saved` is false.
  func set(_ id: Int, saved: Bool) async throws
}

/// A ``FavouritesStore`` in memory: each call waits `latency` on `clock`,
/// as a disk or a server would.
///
/// ```swift
/// let favourites = InMemoryFavourites(latency: .milliseconds(200), clock: clock)
/// ```
public actor InMemoryFavourites: FavouritesStore {
  private let latency: Duration
  private let clock: any Clock<Duration>
  /// The ids saved.
  public private(set) var saved: Set<Int>

  /// A store holding `saved`, whose calls take `latency` on `clock`.
  public init(latency: Duration, clock: any Clock<Duration> = ContinuousClock(), saved: Set<Int> = []) {
    self.latency = latency
    self.clock = clock
    self.saved = saved
  }

  public func contains(_ id: Int) async throws -> Bool {
    try await clock.sleep(for: latency)
    return saved.contains(id)
  }

  public func set(_ id: Int, saved isSaved: Bool) async throws {
    try await clock.sleep(for: latency)
    if isSaved { saved.insert(id) } else { saved.remove(id) }
  }
}

/// The key of the ``FavouritesStore`` dependency; no default, as for the
/// property API.
public enum FavouritesStoreKey: DependencyKey {
  public typealias Value = any FavouritesStore
}

extension Dependencies {
  /// The scene's favourites worker.
  ///
  /// ```swift
  /// let dependencies = Dependencies { $0.favourites = InMemoryFavourites(latency: .zero) }
  /// ```
  public var favourites: any FavouritesStore {
    get { self[FavouritesStoreKey.self] }
    set { self[FavouritesStoreKey.self] = newValue }
  }
}
