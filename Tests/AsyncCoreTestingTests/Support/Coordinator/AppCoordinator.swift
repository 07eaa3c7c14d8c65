import AsyncCore
import AsyncCoreNavigation

/// The App Coordinator seed's parent: it owns the route stack, places the
/// two features, turns their delegate actions and deep links into routes,
/// and keeps the detail's state in step with the stack. Search and
/// PropertyDetail never name each other's types; only this file knows
/// both.
enum Route: Hashable, Sendable {
  /// A property's detail screen.
  case property(id: Int)
  /// The photos of the property whose detail is below.
  case photos
}

struct App: Sendable, Equatable {
  /// The root screen, always there.
  var search = Search()
  /// The screens over the search.
  var stack = RouteStack<Route>()
  /// The detail's state: there exactly while a `.property` route is on the
  /// stack, for the topmost one.
  var detail: PropertyDetail?
  /// Why the last deep link opened nothing; cleared by one that opens.
  var linkFailure: LinkFailure?
}

/// A deep link the coordinator refused.
enum LinkFailure: Sendable, Equatable {
  /// The parser could not read it.
  case unreadable(DeepLinkError)
  /// It reads, but into a stack the app cannot show (photos with no
  /// property under them).
  case cannotShow([Route])
}

enum AppAction: Sendable, Equatable {
  case search(SearchAction)
  case detail(PropertyDetailAction)
  case navigation(NavigationAction<Route>)
  /// A link from outside the app: a notification, a web page, a QR code.
  case openLink(String)

  static let searchCase = ActionCase(embed: AppAction.search) {
    if case .search(let action) = $0 { action } else { nil }
  }
  static let detailCase = ActionCase(embed: AppAction.detail) {
    if case .detail(let action) = $0 { action } else { nil }
  }
  static let navigationCase = ActionCase(embed: AppAction.navigation) {
    if case .navigation(let action) = $0 { action } else { nil }
  }
}

extension RouteStack<Route> {
  /// The id of the topmost property route: the detail the state holds.
  var shownPropertyID: Int? {
    for case .property(let id) in routes.reversed() { return id }
    return nil
  }

  /// Whether the app can show these routes: photos only right over a
  /// property.
  var isShowable: Bool {
    routes.indices.allSatisfy { index in
      guard routes[index] == .photos else { return true }
      guard index > 0, case .property = routes[index - 1] else { return false }
      return true
    }
  }
}

enum AppCoordinator {
  static let links = DeepLinks<Route>(scheme: "app")
    .rule("property/:id") { try .property(id: $0.int("id")) }
    .rule("photos") { _ in .photos }

  /// The whole app. The detail is removed inside `ifLet`'s parent, so
  /// that `ifLet` sees it leave and cancels its effects; a new one is made
  /// after, by `present`. Replacing one detail by another in one step
  /// would not cancel the first one's load (`ifLet` sees a detail before
  /// and after), so a changed property id goes through both steps.
  static let reducer = Reduce<App, AppAction>.combine([
    .scope(state: \.search, action: AppAction.searchCase, child: SearchFeature.reducer),
    Reduce.combine([
      .scope(state: \.stack, action: AppAction.navigationCase, child: RouteStack.reducer),
      Reduce(route),
    ])
    .ifLet(\.detail, action: AppAction.detailCase, then: PropertyDetailFeature.reducer),
    Reduce(present),
  ])

  /// Maps what the children tell and the links from outside to the stack;
  /// removes a detail whose route has left it.
  @Sendable
  static func route(_ state: inout App, _ action: AppAction) {
    switch action {
    case .search(.delegate(.didSelect(let id))):
      state.stack.push(.property(id: id))
    case .detail(.delegate(.didOpenPhotos)):
      state.stack.push(.photos)
    case .detail(.delegate(.didClose)):
      // Closes the detail, and the photos over it if any.
      while let top = state.stack.pop(), top == .photos {}
    case .openLink(let link):
      do {
        let stack = RouteStack(try links.routes(for: link))
        guard stack.isShowable else {
          state.linkFailure = .cannotShow(stack.routes)
          return
        }
        state.stack = stack
        state.linkFailure = nil
      } catch {
        state.linkFailure = .unreadable(error)
      }
    case .search, .detail, .navigation:
      break
    }
    if let detail = state.detail, detail.id != state.stack.shownPropertyID {
      state.detail = nil
    }
  }

  /// Makes the detail for a property route that has none yet, and lets it
  /// load, as its screen's appearance would.
  @Sendable
  static func present(_ state: inout App, _ action: AppAction) -> Effect<AppAction> {
    guard state.detail == nil, let id = state.stack.shownPropertyID else { return .none }
    state.detail = PropertyDetail(id: id)
    return .send(.detail(.onAppear))
  }
}
