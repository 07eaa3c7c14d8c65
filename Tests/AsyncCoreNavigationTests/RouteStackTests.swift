import AsyncCore
import AsyncCoreNavigation
import Testing

/// A route stack in state, and its reducer.
@Suite("RouteStack", .hangDetector)
struct RouteStackTests {
  @Test("a new stack is empty: the root screen shows")
  func startsAtTheRoot() {
    let stack = RouteStack<LinkRoute>()
    #expect(stack.routes.isEmpty)
    #expect(stack.top == nil)
    #expect(stack == [])
  }

  @Test("push puts a route on top; pop takes it off and returns it")
  func pushAndPop() {
    var stack = RouteStack<LinkRoute>()
    stack.push(.property(id: 42))
    stack.push(.photos)
    #expect(stack.routes == [.property(id: 42), .photos])
    #expect(stack.top == .photos)
    #expect(stack.pop() == .photos)
    #expect(stack.top == .property(id: 42))
    #expect(stack.pop() == .property(id: 42))
    #expect(stack.routes.isEmpty)
  }

  @Test("popping the root screen changes nothing and returns nil")
  func popAtTheRoot() {
    var stack = RouteStack<LinkRoute>()
    #expect(stack.pop() == nil)
    #expect(stack == RouteStack())
  }

  @Test("popToRoot empties the stack, and is harmless at the root")
  func popToRoot() {
    var stack: RouteStack<LinkRoute> = [.property(id: 1), .property(id: 2), .photos]
    stack.popToRoot()
    #expect(stack.routes.isEmpty)
    stack.popToRoot()
    #expect(stack.routes.isEmpty)
  }

  @Test("replaceTop swaps the route on top and returns the old one; at the root it pushes")
  func replaceTop() {
    var stack: RouteStack<LinkRoute> = [.property(id: 1), .property(id: 2)]
    #expect(stack.replaceTop(with: .property(id: 3)) == .property(id: 2))
    #expect(stack.routes == [.property(id: 1), .property(id: 3)])
    var empty = RouteStack<LinkRoute>()
    #expect(empty.replaceTop(with: .photos) == nil)
    #expect(empty.routes == [.photos])
  }

  @Test("stacks compare and hash by their routes, in order")
  func equalityAndHashing() {
    let a: RouteStack<LinkRoute> = [.property(id: 1), .photos]
    let b = RouteStack<LinkRoute>([.property(id: 1), .photos])
    let reversed: RouteStack<LinkRoute> = [.photos, .property(id: 1)]
    #expect(a == b)
    #expect(a != reversed)
    #expect(Set([a, b, reversed]).count == 2)
  }

  @Test("the reducer applies each navigation action")
  func reducer() {
    let reducer = RouteStack<LinkRoute>.reducer
    var stack = RouteStack<LinkRoute>()
    let steps: [(NavigationAction<LinkRoute>, [LinkRoute])] = [
      (.push(.property(id: 42)), [.property(id: 42)]),
      (.push(.photos), [.property(id: 42), .photos]),
      (.pop, [.property(id: 42)]),
      (.replace(.property(id: 43)), [.property(id: 43)]),
      (.set([.search(query: "london"), .property(id: 7)]), [.search(query: "london"), .property(id: 7)]),
      (.popToRoot, []),
      (.pop, []),
      (.replace(.photos), [.photos]),
      (.set([]), []),
    ]
    for (action, expected) in steps {
      _ = reducer.reduce(into: &stack, action: action)
      #expect(stack.routes == expected, "after \(action)")
    }
  }

  @Test("the reducer placed with scope changes only the parent's stack")
  func scoped() {
    struct App: Equatable {
      var stack = RouteStack<LinkRoute>()
      var title = "home"
    }
    enum AppAction: Sendable {
      case navigation(NavigationAction<LinkRoute>)
      case rename(String)
    }
    let navigation = ActionCase(embed: AppAction.navigation) {
      if case .navigation(let action) = $0 { action } else { nil }
    }
    let app = Reduce<App, AppAction>.scope(state: \.stack, action: navigation, child: RouteStack.reducer)
    var state = App()
    _ = app.reduce(into: &state, action: .navigation(.push(.photos)))
    _ = app.reduce(into: &state, action: .rename("ignored"))
    #expect(state == App(stack: [.photos], title: "home"))
  }
}
