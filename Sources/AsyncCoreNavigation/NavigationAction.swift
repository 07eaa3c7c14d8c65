import AsyncCore

/// A change to a ``RouteStack``, as an action: what a parent's navigation
/// case carries, reduced by ``RouteStack/reducer``.
///
/// ```swift
/// enum AppAction: Sendable {
///   case navigation(NavigationAction<Route>)
///   case search(SearchAction)
///
///   static let navigationCase = ActionCase(embed: AppAction.navigation) {
///     if case .navigation(let action) = $0 { action } else { nil }
///   }
/// }
///
/// let app = Reduce<App, AppAction>.combine([
///   .scope(state: \.stack, action: AppAction.navigationCase, child: RouteStack.reducer),
///   coordinator,
/// ])
/// core.send(.navigation(.pop))   // the back button
/// ```
public enum NavigationAction<Route: Hashable & Sendable>: Hashable, Sendable {
  /// Puts the route on top; see ``RouteStack/push(_:)``.
  ///
  /// ```swift
  /// core.send(.navigation(.push(.property(id: 42))))
  /// ```
  case push(Route)
  /// Removes the route on top, if any; see ``RouteStack/pop()``.
  ///
  /// ```swift
  /// core.send(.navigation(.pop))
  /// ```
  case pop
  /// Removes every route; see ``RouteStack/popToRoot()``.
  ///
  /// ```swift
  /// core.send(.navigation(.popToRoot))
  /// ```
  case popToRoot
  /// Puts the route in place of the one on top (pushes it on an empty
  /// stack); see ``RouteStack/replaceTop(with:)``.
  ///
  /// ```swift
  /// core.send(.navigation(.replace(.property(id: 43))))
  /// ```
  case replace(Route)
  /// Replaces the whole stack, bottom first: what a deep link or a state
  /// restoration does.
  ///
  /// ```swift
  /// core.send(.navigation(.set([.property(id: 42), .photos])))
  /// ```
  case set([Route])
}

extension RouteStack {
  /// The reducer of a stack: applies each ``NavigationAction`` and starts
  /// no effect. Placed in a parent with AsyncCore's
  /// `Reduce.scope(state:action:child:)`.
  ///
  /// ```swift
  /// let app = Reduce<App, AppAction>.combine([
  ///   .scope(state: \.stack, action: AppAction.navigationCase, child: RouteStack.reducer),
  ///   coordinator,
  /// ])
  /// ```
  ///
  /// - Important: List the parent logic that keeps screens' state in step
  ///   with the stack (creating a detail for a pushed route, removing it
  ///   when its route is popped) after this reducer, so it sees the stack
  ///   the action left.
  public static var reducer: Reduce<RouteStack, NavigationAction<Route>> {
    Reduce { stack, action in stack.apply(action) }
  }
}
