/// The screens pushed over an app's root screen, as a value in its state:
/// the last route is the one on top.
///
/// ```swift
/// enum Route: Hashable, Sendable {
///   case property(id: Int)
///   case photos
/// }
///
/// var stack = RouteStack<Route>()   // only the root screen
/// stack.push(.property(id: 42))
/// stack.push(.photos)
/// stack.top                          // .photos
/// stack.pop()                        // .photos; .property(id: 42) is on top again
/// stack.popToRoot()                  // empty: the root screen shows
/// ```
///
/// The root screen is not a route: an empty stack shows it, and popping an
/// empty stack changes nothing and returns `nil`. The stack holds no
/// screen's state, only where the user is; a coordinator keeps each
/// feature's state beside it (see ``NavigationAction`` and
/// <doc:Navigation>).
public struct RouteStack<Route: Hashable & Sendable>: Hashable, Sendable, ExpressibleByArrayLiteral {
  /// The routes over the root screen, bottom first: the last one is on top.
  ///
  /// ```swift
  /// stack.routes = [.property(id: 42), .photos]   // a deep link's whole stack
  /// ```
  public var routes: [Route]

  /// A stack holding `routes`, the last one on top; by default, only the
  /// root screen.
  ///
  /// ```swift
  /// let stack = RouteStack<Route>([.property(id: 42)])
  /// ```
  public init(_ routes: [Route] = []) {
    self.routes = routes
  }

  /// A stack holding the routes listed, the last one on top.
  ///
  /// ```swift
  /// let stack: RouteStack<Route> = [.property(id: 42), .photos]
  /// ```
  public init(arrayLiteral routes: Route...) {
    self.routes = routes
  }

  /// The route on top, or `nil` when the root screen shows.
  ///
  /// ```swift
  /// if case .property(let id) = stack.top { print("showing \(id)") }
  /// ```
  public var top: Route? { routes.last }

  /// Puts `route` on top.
  ///
  /// ```swift
  /// stack.push(.property(id: 42))
  /// ```
  public mutating func push(_ route: Route) {
    routes.append(route)
  }

  /// Removes the route on top and returns it; on an empty stack (the root
  /// screen) changes nothing and returns `nil`.
  ///
  /// ```swift
  /// if stack.pop() == nil { print("already at the root") }
  /// ```
  @discardableResult
  public mutating func pop() -> Route? {
    routes.popLast()
  }

  /// Removes every route: the root screen shows.
  ///
  /// ```swift
  /// stack.popToRoot()
  /// ```
  public mutating func popToRoot() {
    routes.removeAll()
  }

  /// Puts `route` in place of the route on top and returns the one it
  /// replaced; on an empty stack, pushes `route` and returns `nil`. Either
  /// way `route` ends on top.
  ///
  /// ```swift
  /// stack.replaceTop(with: .property(id: 43))   // a "next property" button
  /// ```
  @discardableResult
  public mutating func replaceTop(with route: Route) -> Route? {
    let replaced = routes.popLast()
    routes.append(route)
    return replaced
  }

  /// Changes the stack as `action` says.
  ///
  /// ```swift
  /// stack.apply(.push(.property(id: 42)))
  /// stack.apply(.set([]))   // as popToRoot()
  /// ```
  public mutating func apply(_ action: NavigationAction<Route>) {
    switch action {
    case .push(let route): push(route)
    case .pop: pop()
    case .popToRoot: popToRoot()
    case .replace(let route): replaceTop(with: route)
    case .set(let routes): self.routes = routes
    }
  }
}
