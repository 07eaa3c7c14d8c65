import AsyncCore

/// The detail screen of one property. It is given an id and loads the
/// property as it opens; it knows nothing of the search.
///
/// ```swift
/// await store.receive(.detail(.endLoading(flat))) {
///   $0.detail?.isLoading = false
///   $0.detail?.property = flat
/// }
/// ```
public struct PropertyDetail: Sendable, Equatable, Codable {
  /// The property shown.
  public let id: Int
  /// The property, once loaded.
  public var property: Property?
  /// Whether it loads: the loading line.
  public var isLoading: Bool
  /// The API's error.
  public var error: String?

  public init(id: Int, property: Property? = nil, isLoading: Bool = false, error: String? = nil) {
    self.id = id
    self.property = property
    self.isLoading = isLoading
    self.error = error
  }
}

/// What happens on the detail screen.
public enum PropertyDetailAction: Sendable, Equatable, Codable {
  /// Loads the property; sent by the coordinator as the screen opens.
  case startLoading
  /// The API sent the property.
  case endLoading(Property)
  /// The API answered with an error.
  case failed(String)
}

extension PropertyDetail {
  /// The detail screen. Its load is cancelled with the screen, by the
  /// coordinator's `ifLet`.
  public static let reducer = Reduce<PropertyDetail, PropertyDetailAction> { state, action in
    switch action {
    case .startLoading:
      state.isLoading = true
      state.error = nil
      return .run { [id = state.id] send in
        await send(.endLoading(try await send.dependencies.propertyAPI.property(id: id)))
      } catch: { error, send in
        await send(.failed("\(error)"))
      }
    case .endLoading(let property):
      state.isLoading = false
      state.property = property
      return .none
    case .failed(let message):
      state.isLoading = false
      state.error = message
      return .none
    }
  }
}
