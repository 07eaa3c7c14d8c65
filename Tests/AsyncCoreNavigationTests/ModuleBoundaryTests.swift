import AsyncCoreNavigation
import Testing

/// What the AsyncCoreNavigation module holds: the router a service that
/// imports AsyncCore alone never compiles.
@Suite("AsyncCoreNavigation's module boundary", .hangDetector)
struct NavigationModuleBoundaryTests {
  @Test(
    "the route stack, its actions and deep links are declared by AsyncCoreNavigation",
    arguments: [
      (RouteStack<Int>.self, "RouteStack<Swift.Int>"),
      (NavigationAction<Int>.self, "NavigationAction<Swift.Int>"),
      (DeepLinks<Int>.self, "DeepLinks<Swift.Int>"),
      (DeepLinkParameters.self, "DeepLinkParameters"),
      (DeepLinkError.self, "DeepLinkError"),
    ] as [(Any.Type, String)])
  func declaredHere(type: Any.Type, name: String) {
    #expect(String(reflecting: type) == "AsyncCoreNavigation." + name)
  }
}
