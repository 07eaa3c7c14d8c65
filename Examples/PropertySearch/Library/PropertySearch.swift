import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreNavigation

/// The screens over the search prompt, the root.
public enum PropertyRoute: Hashable, Sendable, Codable {
  /// The properties found in `place`.
  case results(place: String)
  /// The property `id`.
  case property(id: Int)
}

/// The ReSwift + App Coordinator seed's property search: a search prompt,
/// a results list, a property's detail, in one state whose route stack
/// says where the user is.
///
/// ```swift
/// let core = Core(
///   initialState: PropertySearch(),
///   dependencies: Dependencies { $0.propertyAPI = FakePropertyAPI(latency: .milliseconds(500)) },
///   reducer: PropertySearch.reducer)
/// try await core.dispatch(.search(place: "Leeds"))
/// ```
///
/// Each screen's state exists while its route is the topmost of its kind
/// on ``stack``: ``results`` for a `.results` route, ``detail`` for a
/// `.property` one. When a route leaves (back, a new search, a link), its
/// screen's state goes with it, and so does the request it was waiting for.
public struct PropertySearch: Sendable, Equatable, Codable {
  /// The screens over the search prompt.
  public var stack: RouteStack<PropertyRoute>
  /// The results screen, while a `.results` route is on the stack.
  public var results: Results?
  /// The detail screen, while a `.property` route is on the stack.
  public var detail: PropertyDetail?
  /// Why the last link opened nothing; cleared by the next action.
  public var linkError: DeepLinkError?

  public init(
    stack: RouteStack<PropertyRoute> = [], results: Results? = nil, detail: PropertyDetail? = nil,
    linkError: DeepLinkError? = nil
  ) {
    self.stack = stack
    self.results = results
    self.detail = detail
    self.linkError = linkError
  }

  /// Whether a request runs, on whichever screen.
  public var isLoading: Bool { results?.isLoading == true || detail?.isLoading == true }
}

/// Everything that happens in the property search.
public enum PropertySearchAction: Sendable, Equatable, Codable {
  /// The user typed a place: a new search, from the root.
  case search(place: String)
  /// A link from outside: the command line, a notification, a web page.
  case openLink(String)
  case results(ResultsAction)
  case detail(PropertyDetailAction)
  case navigation(NavigationAction<PropertyRoute>)

  public static let resultsCase = ActionCase(embed: PropertySearchAction.results) {
    if case .results(let action) = $0 { action } else { nil }
  }
  public static let detailCase = ActionCase(embed: PropertySearchAction.detail) {
    if case .detail(let action) = $0 { action } else { nil }
  }
  public static let navigationCase = ActionCase(embed: PropertySearchAction.navigation) {
    if case .navigation(let action) = $0 { action } else { nil }
  }
}

extension RouteStack<PropertyRoute> {
  /// The place of the topmost results route: the results the state holds.
  public var shownPlace: String? {
    for case .results(let place) in routes.reversed() { return place }
    return nil
  }

  /// The id of the topmost property route: the detail the state holds.
  public var shownPropertyID: Int? {
    for case .property(let id) in routes.reversed() { return id }
    return nil
  }
}

extension PropertySearch {
  /// The links the app opens: `asynccore://search?place=Leeds`,
  /// `asynccore://property/42`, and both in one,
  /// `asynccore://search/property/42?place=Leeds` (the results, the detail
  /// over them).
  ///
  /// ```swift
  /// try PropertySearch.links.routes(for: "asynccore://property/42")   // [.property(id: 42)]
  /// ```
  public static let links = DeepLinks<PropertyRoute>(scheme: "asynccore")
    .rule("search") { try .results(place: $0.string("place")) }
    .rule("property/:id") { try .property(id: $0.int("id")) }

  /// The screens composed, with the coordinator that routes between them.
  ///
  /// Screens never name each other: the results screen says which property
  /// was chosen (a delegate action), and only the coordinator turns that,
  /// a search and a link into routes. A screen's state is removed inside
  /// the `ifLet`s' parent, so that they cancel its request; a new one is
  /// made after, by ``present(_:_:)``, which starts its load.
  public static let reducer = Reduce<PropertySearch, PropertySearchAction>.combine([
    Reduce.combine([
      .scope(state: \.stack, action: PropertySearchAction.navigationCase, child: RouteStack.reducer),
      Reduce(route),
    ])
    .ifLet(\.results, action: PropertySearchAction.resultsCase, then: Results.reducer)
    .ifLet(\.detail, action: PropertySearchAction.detailCase, then: PropertyDetail.reducer),
    Reduce(present),
  ])

  /// Maps searches, choices and links to the stack; removes a screen's
  /// state once its route has left.
  @Sendable
  static func route(_ state: inout PropertySearch, _ action: PropertySearchAction) {
    state.linkError = nil
    switch action {
    case .search(let place):
      state.results = nil  // searching a place shown again loads it again
      state.stack = [.results(place: place)]
    case .results(.delegate(.didSelect(let id))):
      state.stack.push(.property(id: id))
    case .openLink(let link):
      do {
        state.stack = RouteStack(try links.routes(for: link))
      } catch {
        state.linkError = error
      }
    case .results, .detail, .navigation:
      break
    }
    if let results = state.results, results.place != state.stack.shownPlace { state.results = nil }
    if let detail = state.detail, detail.id != state.stack.shownPropertyID { state.detail = nil }
  }

  /// Makes the screen's state for a route that has none yet, and starts
  /// its load, as the screen's appearing would.
  @Sendable
  static func present(_ state: inout PropertySearch, _ action: PropertySearchAction) -> Effect<PropertySearchAction> {
    var loads: [Effect<PropertySearchAction>] = []
    if state.results == nil, let place = state.stack.shownPlace {
      state.results = Results(place: place)
      loads.append(.send(.results(.startLoading)))
    }
    if state.detail == nil, let id = state.stack.shownPropertyID {
      state.detail = PropertyDetail(id: id)
      loads.append(.send(.detail(.startLoading)))
    }
    return .merge(loads)
  }
}
