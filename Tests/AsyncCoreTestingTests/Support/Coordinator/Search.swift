import AsyncCore

/// The search screen, the app's root: a place name, and the properties
/// found there. It knows nothing of the detail screen: selecting a result
/// only tells its parent, through a delegate action.
struct Search: Sendable, Equatable {
  var query = ""
  var results: [Listing] = []
  var isSearching = false
  var failed = false
}

enum SearchAction: Sendable, Equatable {
  case queryChanged(String)
  case searchTapped
  case resultsLoaded([Listing])
  case searchFailed
  case resultTapped(id: Int)
  /// What the search tells its parent; the search itself ignores them.
  case delegate(Delegate)

  enum Delegate: Sendable, Equatable {
    /// The user chose a property.
    case didSelect(propertyID: Int)
  }
}

enum SearchFeature {
  struct SearchID: Hashable, Sendable {}

  static let reducer = Reduce<Search, SearchAction> { state, action in
    switch action {
    case .queryChanged(let query):
      state.query = query
      return .none
    case .searchTapped:
      state.isSearching = true
      state.failed = false
      let place = state.query
      return .run { send in
        await send(.resultsLoaded(try await send.dependencies.propertyAPI.search(place)))
      } catch: { _, send in
        await send(.searchFailed)
      }
      .cancellable(id: SearchID(), cancelInFlight: true)
    case .resultsLoaded(let results):
      state.isSearching = false
      state.results = results
      return .none
    case .searchFailed:
      state.isSearching = false
      state.failed = true
      return .none
    case .resultTapped(let id):
      return .send(.delegate(.didSelect(propertyID: id)))
    case .delegate:
      return .none
    }
  }
}
