import AsyncCore

/// The detail screen of one property, and its photos screen over it. It
/// knows nothing of the search: it is given an id, loads the property when
/// it appears, and tells its parent when the user wants the photos or to
/// close it, through delegate actions.
struct PropertyDetail: Sendable, Equatable {
  let id: Int
  var property: Property?
  var isLoading = false
  var failed = false
}

enum PropertyDetailAction: Sendable, Equatable {
  /// The screen appeared: loads the property.
  case onAppear
  case loaded(Property)
  case loadFailed
  case photosTapped
  case closeTapped
  /// What the detail tells its parent; the detail itself ignores them.
  case delegate(Delegate)

  enum Delegate: Sendable, Equatable {
    case didOpenPhotos
    case didClose
  }
}

enum PropertyDetailFeature {
  // The load needs no cancel id of its own: the parent's `ifLet` cancels
  // it when the detail leaves the state.
  static let reducer = Reduce<PropertyDetail, PropertyDetailAction> { state, action in
    switch action {
    case .onAppear:
      state.isLoading = true
      state.failed = false
      let id = state.id
      return .run { send in
        await send(.loaded(try await send.dependencies.propertyAPI.property(id)))
      } catch: { _, send in
        await send(.loadFailed)
      }
    case .loaded(let property):
      state.isLoading = false
      state.property = property
      return .none
    case .loadFailed:
      state.isLoading = false
      state.failed = true
      return .none
    case .photosTapped:
      return .send(.delegate(.didOpenPhotos))
    case .closeTapped:
      return .send(.delegate(.didClose))
    case .delegate:
      return .none
    }
  }
}
