import AsyncCore
import AsyncCorePropertySearchExample

/// Where the scene's navigator takes the user.
public enum PropertySceneRoute: Hashable, Sendable {
  /// The property itself: the scene's own screen.
  case property
  /// The contact form for the letting agent of the property.
  case contact(title: String)
  /// The screen to book a viewing of the property.
  case viewing(title: String)
  /// The scene is left: back to whatever opened it.
  case closed
}

/// The logic state of the property scene, the DLC scene's "logic": what
/// the scene knows, whatever the display shows of it.
///
/// ```swift
/// let scene = Core(
///   initialState: PropertyLogic(propertyID: 42), dependencies: workers, reducer: PropertyLogic.reducer)
/// scene.send(.onAppear)
/// ```
public struct PropertyLogic: Sendable, Equatable {
  /// The property the scene shows.
  public let propertyID: Int
  /// The property, once the API sent it.
  public var property: Property?
  /// Whether the user saved it, once the favourites store answered.
  public var isFavourite: Bool
  /// The request running, if any.
  public var loading: Loading?
  /// The last worker's error.
  public var error: String?
  /// Where the navigator is to take the user.
  public var route: PropertySceneRoute

  /// What the scene waits for.
  public enum Loading: Sendable, Equatable {
    /// The property and whether it is saved.
    case property
    /// The favourites store saves the change.
    case favourite
  }

  public init(
    propertyID: Int, property: Property? = nil, isFavourite: Bool = false, loading: Loading? = nil,
    error: String? = nil, route: PropertySceneRoute = .property
  ) {
    self.propertyID = propertyID
    self.property = property
    self.isFavourite = isFavourite
    self.loading = loading
    self.error = error
    self.route = route
  }
}

/// What happens in the property scene: the view's events, and the workers'
/// answers.
public enum PropertyLogicAction: Sendable, Equatable {
  /// The scene appeared: loads the property and whether it is saved.
  case onAppear
  /// The workers answered.
  case loaded(Property, isFavourite: Bool)
  /// A worker failed.
  case failed(String)
  /// Saves the property, or removes it from the favourites.
  case toggleFavourite
  /// The favourites store saved the change.
  case favouriteSaved(Bool)
  /// Opens the contact form.
  case contactTapped
  /// Opens the booking of a viewing.
  case bookViewingTapped
  /// Back: from a screen the navigator opened to the property, from the
  /// property out of the scene.
  case backTapped
}

extension PropertyLogic {
  /// The error for a request that needs the property before it is loaded.
  public static let notLoaded = "The property is not loaded."

  /// The scene's logic. Its workers come from the core's `Dependencies`;
  /// its routes are for the navigator.
  public static let reducer = Reduce<PropertyLogic, PropertyLogicAction> { state, action in
    switch action {
    case .onAppear:
      guard state.loading == nil else { return .none }
      state.loading = .property
      state.error = nil
      return .run { [id = state.propertyID] send in
        let property = try await send.dependencies.propertyAPI.property(id: id)
        let isFavourite = try await send.dependencies.favourites.contains(id)
        await send(.loaded(property, isFavourite: isFavourite))
      } catch: { error, send in
        await send(.failed("\(error)"))
      }
    case .loaded(let property, let isFavourite):
      state.loading = nil
      state.property = property
      state.isFavourite = isFavourite
      return .none
    case .failed(let message):
      state.loading = nil
      state.error = message
      return .none
    case .toggleFavourite:
      guard state.loading == nil else { return .none }
      guard state.property != nil else {
        state.error = notLoaded
        return .none
      }
      state.loading = .favourite
      state.error = nil
      return .run { [id = state.propertyID, saved = !state.isFavourite] send in
        try await send.dependencies.favourites.set(id, saved: saved)
        await send(.favouriteSaved(saved))
      } catch: { error, send in
        await send(.failed("\(error)"))
      }
    case .favouriteSaved(let saved):
      state.loading = nil
      state.isFavourite = saved
      return .none
    case .contactTapped, .bookViewingTapped:
      guard let property = state.property else {
        state.error = notLoaded
        return .none
      }
      state.error = nil
      if case .contactTapped = action {
        state.route = .contact(title: property.title)
      } else {
        state.route = .viewing(title: property.title)
      }
      return .none
    case .backTapped:
      state.route = state.route == .property ? .closed : .property
      return .none
    }
  }
}
