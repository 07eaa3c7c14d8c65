import AsyncCore
import AsyncCoreTesting

/// A property in a search's results: what a row of the list shows.
struct Listing: Sendable, Equatable, Identifiable {
  let id: Int
  var title: String
}

/// A property's detail, as the detail screen shows it.
struct Property: Sendable, Equatable {
  let id: Int
  var title: String
  var bedrooms: Int
}

/// The network worker the two features share: searching by place name and
/// loading one property. A dependency both features' effects read from
/// `send.dependencies`; neither feature knows the other uses it.
struct PropertyAPI: Sendable {
  var search: @Sendable (_ place: String) async throws -> [Listing]
  var property: @Sendable (_ id: Int) async throws -> Property

  struct NotFound: Error, Equatable {}

  /// The listings the fake server knows, by place.
  static let listings: [String: [Listing]] = [
    "london": [Listing(id: 42, title: "Flat in Camden"), Listing(id: 7, title: "House in Hackney")]
  ]

  /// The properties the fake server knows, by id.
  static let properties: [Int: Property] = [
    42: Property(id: 42, title: "Flat in Camden", bedrooms: 2),
    7: Property(id: 7, title: "House in Hackney", bedrooms: 4),
    8: Property(id: 8, title: "Loft in Shoreditch", bedrooms: 1),
  ]

  /// A server that answers after `latency` on `clock`, from the catalogue
  /// above: an unknown place has no results, an unknown id is `NotFound`.
  static func server(on clock: ManualClock, latency: Duration) -> Self {
    PropertyAPI(
      search: { place in
        try await clock.sleep(for: latency)
        return listings[place.lowercased()] ?? []
      },
      property: { id in
        try await clock.sleep(for: latency)
        guard let property = properties[id] else { throw NotFound() }
        return property
      }
    )
  }
}

/// No default: a core that was not given the API stops with a message
/// naming this key when an effect reads it.
enum PropertyAPIKey: DependencyKey {
  typealias Value = PropertyAPI
}

extension Dependencies {
  var propertyAPI: PropertyAPI {
    get { self[PropertyAPIKey.self] }
    set { self[PropertyAPIKey.self] = newValue }
  }
}
