import AsyncCore
import AsyncCoreNavigation
import AsyncCoreTesting
import Testing

/// The App Coordinator seed: a property search whose parent owns
/// the route stack, maps the children's delegate actions and deep links to
/// routes, and keeps the detail's state (and its load) alive exactly while
/// its route is on the stack.
@Suite("App coordinator", .timeLimit(.minutes(5)))
struct CoordinatorTests {
  let clock = ManualClock()
  /// How long the fake server takes to answer.
  static let latency = Duration.milliseconds(300)

  static let camden = Property(id: 42, title: "Flat in Camden", bedrooms: 2)
  static let hackney = Property(id: 7, title: "House in Hackney", bedrooms: 4)
  static let shoreditch = Property(id: 8, title: "Loft in Shoreditch", bedrooms: 1)
  static let london = [Listing(id: 42, title: "Flat in Camden"), Listing(id: 7, title: "House in Hackney")]

  func makeStore(initialState: App = App()) -> TestCore<App, AppAction> {
    TestCore(
      initialState: initialState,
      dependencies: Dependencies { $0.propertyAPI = .server(on: clock, latency: Self.latency) },
      clock: clock,
      timeout: Fixture.timeout,
      reducer: AppCoordinator.reducer
    )
  }

  /// Lets the fake server answer the one request in flight.
  func answer() async {
    await clock.waitForSleepers(1)
    await clock.advance(by: Self.latency)
  }

  /// The detail made for a property route appears and loads `property`.
  func load(_ property: Property, on store: TestCore<App, AppAction>) async {
    await store.receive(.detail(.onAppear)) { $0.detail?.isLoading = true }
    await answer()
    await store.receive(.detail(.loaded(property))) {
      $0.detail?.isLoading = false
      $0.detail?.property = property
    }
  }

  /// The state with the detail of `property` open and loaded over `stack`.
  static func showing(_ property: Property, stack: RouteStack<Route>) -> App {
    App(stack: stack, detail: PropertyDetail(id: property.id, property: property))
  }

  // MARK: - Delegates to routes

  @Test("searching a place, then selecting a result, opens its detail over the search")
  func searchThenSelect() async {
    let store = makeStore()
    await store.send(.search(.queryChanged("London"))) { $0.search.query = "London" }
    await store.send(.search(.searchTapped)) { $0.search.isSearching = true }
    await answer()
    await store.receive(.search(.resultsLoaded(Self.london))) {
      $0.search.isSearching = false
      $0.search.results = Self.london
    }
    // The search only says what the user chose; the coordinator routes.
    await store.send(.search(.resultTapped(id: 42)))
    await store.receive(.search(.delegate(.didSelect(propertyID: 42)))) {
      $0.stack = [.property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await load(Self.camden, on: store)
    await store.finish()
  }

  @Test("the detail's delegates open its photos and close it, photos included")
  func detailDelegates() async {
    let store = makeStore(initialState: Self.showing(Self.camden, stack: [.property(id: 42)]))
    await store.send(.detail(.photosTapped))
    await store.receive(.detail(.delegate(.didOpenPhotos))) { $0.stack = [.property(id: 42), .photos] }
    // Back from the photos: the detail is still there, loaded, not reloaded.
    await store.send(.navigation(.pop)) { $0.stack = [.property(id: 42)] }
    await store.send(.detail(.photosTapped))
    await store.receive(.detail(.delegate(.didOpenPhotos))) { $0.stack = [.property(id: 42), .photos] }
    await store.send(.detail(.closeTapped))
    await store.receive(.detail(.delegate(.didClose))) {
      $0.stack = []
      $0.detail = nil
    }
    await store.finish()
  }

  @Test("closing a detail pushed over another goes back to the one below, which loads again")
  func closeOverAnotherDetail() async {
    let store = makeStore(initialState: Self.showing(Self.camden, stack: [.property(id: 42)]))
    await store.send(.navigation(.push(.property(id: 7)))) {
      $0.stack = [.property(id: 42), .property(id: 7)]
      $0.detail = PropertyDetail(id: 7)
    }
    await load(Self.hackney, on: store)
    await store.send(.detail(.closeTapped))
    await store.receive(.detail(.delegate(.didClose))) {
      $0.stack = [.property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await load(Self.camden, on: store)
    await store.finish()
  }

  // MARK: - Navigation actions

  @Test("push, pop, replace, set and popToRoot change the stack, and the detail follows it")
  func navigationActions() async {
    let store = makeStore()
    await store.send(.navigation(.pop))  // at the root: nothing changes
    await store.send(.navigation(.push(.property(id: 42)))) {
      $0.stack = [.property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await load(Self.camden, on: store)
    await store.send(.navigation(.push(.photos))) { $0.stack = [.property(id: 42), .photos] }
    await store.send(.navigation(.replace(.property(id: 8)))) {
      $0.stack = [.property(id: 42), .property(id: 8)]
      $0.detail = PropertyDetail(id: 8)
    }
    await load(Self.shoreditch, on: store)
    await store.send(.navigation(.set([.property(id: 7), .photos]))) {
      $0.stack = [.property(id: 7), .photos]
      $0.detail = PropertyDetail(id: 7)
    }
    await load(Self.hackney, on: store)
    await store.send(.navigation(.pop)) { $0.stack = [.property(id: 7)] }
    await store.send(.navigation(.popToRoot)) {
      $0.stack = []
      $0.detail = nil
    }
    await store.send(.navigation(.popToRoot))
    await store.finish()
  }

  // MARK: - The detail's effects live with its route

  @Test("popping the detail while it loads cancels the load: it never sends")
  func popCancelsTheLoad() async {
    let store = makeStore()
    await store.send(.navigation(.push(.property(id: 42)))) {
      $0.stack = [.property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await store.receive(.detail(.onAppear)) { $0.detail?.isLoading = true }
    await clock.waitForSleepers(1)  // the load is in flight
    await store.send(.navigation(.pop)) {
      $0.stack = []
      $0.detail = nil
    }
    // Had the load survived, this would wake it and it would send
    // `.detail(.loaded)`: an action nobody received, for a detail that is
    // gone. And `finish()` fails on an effect still running.
    await clock.advance(by: Self.latency)
    await store.finish()
  }

  @Test("closing the detail through its delegate while it loads cancels the load")
  func closeCancelsTheLoad() async {
    let store = makeStore()
    await store.send(.navigation(.push(.property(id: 42)))) {
      $0.stack = [.property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await store.receive(.detail(.onAppear)) { $0.detail?.isLoading = true }
    await clock.waitForSleepers(1)
    await store.send(.detail(.closeTapped))
    await store.receive(.detail(.delegate(.didClose))) {
      $0.stack = []
      $0.detail = nil
    }
    await clock.advance(by: Self.latency)
    await store.finish()
  }

  @Test("replacing the detail's route while it loads cancels the first load; only the new property arrives")
  func replaceCancelsTheFirstLoad() async {
    let store = makeStore()
    await store.send(.navigation(.push(.property(id: 42)))) {
      $0.stack = [.property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await store.receive(.detail(.onAppear)) { $0.detail?.isLoading = true }
    await clock.waitForSleepers(1)
    await store.send(.navigation(.replace(.property(id: 8)))) {
      $0.stack = [.property(id: 8)]
      $0.detail = PropertyDetail(id: 8)
    }
    await store.receive(.detail(.onAppear)) { $0.detail?.isLoading = true }
    // Had 42's load survived, this would wake it too, and its `.loaded`
    // would land in the detail of 8.
    await answer()
    await store.receive(.detail(.loaded(Self.shoreditch))) {
      $0.detail?.isLoading = false
      $0.detail?.property = Self.shoreditch
    }
    await store.finish()
  }

  // MARK: - Deep links

  @Test("deep links open their stack: the detail over the search, its photos, another property, the root")
  func goodDeepLinks() async {
    let store = makeStore()
    await store.send(.openLink("app://property/42")) {
      $0.stack = [.property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await load(Self.camden, on: store)
    // The same property, with its photos: the loaded detail stays.
    await store.send(.openLink("app://property/42/photos")) { $0.stack = [.property(id: 42), .photos] }
    await store.send(.openLink("app://property/7/")) {
      $0.stack = [.property(id: 7)]
      $0.detail = PropertyDetail(id: 7)
    }
    await load(Self.hackney, on: store)
    await store.send(.openLink("app://")) {
      $0.stack = []
      $0.detail = nil
    }
    await store.finish()
  }

  @Test(
    "a bad deep link changes nothing but the failure it reports; a good one clears it",
    arguments: [
      ("", LinkFailure.unreadable(.notALink(""))),
      ("property/42", .unreadable(.notALink("property/42"))),
      ("https://property/42", .unreadable(.unknownScheme("https"))),
      ("app://property", .unreadable(.noMatchingRule(path: "property"))),
      ("app://search?q=london", .unreadable(.noMatchingRule(path: "search"))),
      ("app://property/abc", .unreadable(.invalidParameter(name: "id", value: "abc", expected: "an integer"))),
      ("app://property/%ZZ", .unreadable(.badPercentEncoding("%ZZ"))),
      ("app://photos", .cannotShow([.photos])),
      ("app://photos/property/42", .cannotShow([.photos, .property(id: 42)])),
      ("app://property/42/photos/photos", .cannotShow([.property(id: 42), .photos, .photos])),
    ] as [(String, LinkFailure)]
  )
  func badDeepLinks(link: String, failure: LinkFailure) async {
    let open = Self.showing(Self.hackney, stack: [.property(id: 7), .photos])
    let store = makeStore(initialState: open)
    await store.send(.openLink(link)) { $0.linkFailure = failure }
    await store.send(.openLink("app://property/7")) {
      $0.stack = [.property(id: 7)]
      $0.linkFailure = nil
    }
    await store.finish()
  }
}
