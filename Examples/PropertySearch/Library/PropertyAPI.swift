import AsyncCore
import AsyncCoreExampleSupport

/// A home to rent, as the fake property API knows it.
///
/// ```swift
/// let flat = Property(
///   id: 42, title: "Flat on Park Row", place: "Leeds", bedrooms: 2, monthlyRent: 1_150,
///   summary: "Two bedrooms over the station's square.")
/// ```
public struct Property: Sendable, Equatable, Identifiable, Codable {
  /// The number a link opens it by: `asynccore://property/42`.
  public let id: Int
  /// What a results row and the detail's heading say.
  public var title: String
  /// The place it is in, as searched: `"Leeds"`.
  public var place: String
  /// Bedrooms: 0 for a studio.
  public var bedrooms: Int
  /// The rent, in whole pounds a month.
  public var monthlyRent: Int
  /// A sentence about it, for the detail screen.
  public var summary: String

  public init(id: Int, title: String, place: String, bedrooms: Int, monthlyRent: Int, summary: String) {
    self.id = id
    self.title = title
    self.place = place
    self.bedrooms = bedrooms
    self.monthlyRent = monthlyRent
    self.summary = summary
  }
}

/// The search's network worker: properties by place name, and one property
/// by its id. Effects reach it as `send.dependencies.propertyAPI`.
///
/// ```swift
/// return .run { send in
///   await send(.endLoading(try await send.dependencies.propertyAPI.search(place: "Leeds")))
/// }
/// ```
public protocol PropertyAPI: Sendable {
  /// The properties in `place`, in the order a results list shows them.
  ///
  /// - Throws: ``PropertyAPIError/unknownPlace(_:)`` for a place the API
  ///   has no properties in, or the network's error.
  func search(place: String) async throws -> [Property]

  /// The property `id`.
  ///
  /// - Throws: ``PropertyAPIError/notFound(id:)`` for an id it does not
  ///   know, or the network's error.
  func property(id: Int) async throws -> Property
}

/// What the property API answers instead of properties. A description
/// quoting the place searched shows it escaped and bounded.
public enum PropertyAPIError: Error, Sendable, Equatable, CustomStringConvertible {
  /// No property is known in this place.
  case unknownPlace(String)
  /// No property has this id.
  case notFound(id: Int)
  /// The server did not answer (the fake's `isOffline`).
  case offline

  public var description: String {
    switch self {
    case .unknownPlace(let place):
      "No homes found in \"\(place.escapedForTerminal())\". Try \(FakePropertyAPI.places.joined(separator: ", "))."
    case .notFound(let id): "There is no property #\(id)."
    case .offline: "The property server is not answering. Try again later."
    }
  }
}

/// A ``PropertyAPI`` that runs in the process, from a small catalogue:
/// each request waits `latency` on `clock`, as a network would.
///
/// ```swift
/// let clock = ManualClock()   // in a test: import AsyncCoreTesting
/// let api = FakePropertyAPI(latency: .milliseconds(500), clock: clock)
/// let core = Core(
///   initialState: PropertySearch(), dependencies: Dependencies { $0.propertyAPI = api }, clock: clock,
///   reducer: PropertySearch.reducer)
/// ```
///
/// The program gives it the core's clock, so a test moves the network
/// with the `ManualClock` it gives the core. With `isOffline`, every
/// request fails with ``PropertyAPIError/offline`` once its latency has
/// passed: the failure a real network has.
public struct FakePropertyAPI: PropertyAPI {
  /// How long each request takes.
  public let latency: Duration
  /// What the latency is measured on.
  public let clock: any Clock<Duration>
  /// Whether every request fails.
  public let isOffline: Bool

  /// An API whose requests take `latency` on `clock`.
  public init(latency: Duration, clock: any Clock<Duration> = ContinuousClock(), isOffline: Bool = false) {
    self.latency = latency
    self.clock = clock
    self.isOffline = isOffline
  }

  /// Every property the fake knows, by place, in search order.
  public static let catalogue: [Property] = [
    Property(
      id: 7, title: "House in Hackney", place: "London", bedrooms: 4, monthlyRent: 3_200,
      summary: "A Victorian house with a garden, ten minutes from the Overground."),
    Property(
      id: 12, title: "Flat in Camden", place: "London", bedrooms: 2, monthlyRent: 2_100,
      summary: "A second-floor flat over the market, with a balcony."),
    Property(
      id: 42, title: "Flat on Park Row", place: "Leeds", bedrooms: 2, monthlyRent: 1_150,
      summary: "A bright flat five minutes from the station."),
    Property(
      id: 43, title: "Terrace in Headingley", place: "Leeds", bedrooms: 3, monthlyRent: 1_400,
      summary: "A red-brick terrace by the park, with a yard."),
    Property(
      id: 44, title: "Studio by the Corn Exchange", place: "Leeds", bedrooms: 0, monthlyRent: 850,
      summary: "A furnished studio in the old town, bills included."),
    Property(
      id: 61, title: "Georgian flat on the Circus", place: "Bath", bedrooms: 2, monthlyRent: 1_900,
      summary: "High ceilings and tall windows on the Circus."),
  ]

  /// The places the catalogue has properties in.
  public static let places = ["London", "Leeds", "Bath"]

  public func search(place: String) async throws -> [Property] {
    try await clock.sleep(for: latency)
    if isOffline { throw PropertyAPIError.offline }
    let found = Self.catalogue.filter { $0.place.lowercased() == place.lowercased() }
    guard !found.isEmpty else { throw PropertyAPIError.unknownPlace(place) }
    return found
  }

  public func property(id: Int) async throws -> Property {
    try await clock.sleep(for: latency)
    if isOffline { throw PropertyAPIError.offline }
    guard let property = Self.catalogue.first(where: { $0.id == id }) else { throw PropertyAPIError.notFound(id: id) }
    return property
  }
}

/// The key of the ``PropertyAPI`` dependency. It has no default: a core
/// whose effects reach the network must be given one (a fake, here), or it
/// stops with a message naming the key.
public enum PropertyAPIKey: DependencyKey {
  public typealias Value = any PropertyAPI
}

extension Dependencies {
  /// The property search's network worker.
  ///
  /// ```swift
  /// let dependencies = Dependencies { $0.propertyAPI = FakePropertyAPI(latency: .milliseconds(500)) }
  /// ```
  public var propertyAPI: any PropertyAPI {
    get { self[PropertyAPIKey.self] }
    set { self[PropertyAPIKey.self] = newValue }
  }
}
