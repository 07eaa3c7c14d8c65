/// The routes of a property-search app, for the stack and the links.
enum LinkRoute: Hashable, Sendable, Codable {
  case property(id: Int)
  case photos
  case search(query: String)
  case page(String)
}
