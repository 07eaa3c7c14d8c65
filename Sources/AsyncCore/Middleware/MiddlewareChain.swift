/// A core's middleware, in the order added, with the context they are
/// handed. Made on the first ``Core/addMiddleware(_:)``: a core without
/// middleware never builds one.
@usableFromInline
struct MiddlewareChain<State: Sendable, Action: Sendable> {
  /// One middleware, as ``Core/addMiddleware(_:)`` takes it.
  @usableFromInline
  typealias Body = @Sendable (Action, State, MiddlewareContext<Action>) -> MiddlewareDecision<Action>

  @usableFromInline
  struct Link {
    @usableFromInline let id: MiddlewareID
    @usableFromInline let body: Body
  }

  /// Never empty while the core's `hasMiddleware` is `true`.
  @usableFromInline var links: [Link] = []
  @usableFromInline let context: MiddlewareContext<Action>

  init(context: MiddlewareContext<Action>) {
    self.context = context
  }

  mutating func add(_ body: @escaping Body) -> MiddlewareID {
    let id = MiddlewareID()
    links.append(Link(id: id, body: body))
    return id
  }

  /// Removes the middleware with `id`; `false` if there is none.
  mutating func remove(_ id: MiddlewareID) -> Bool {
    guard let index = links.firstIndex(where: { $0.id == id }) else { return false }
    links.remove(at: index)
    return true
  }

  /// Passes `action` through every link in order, each given `state` (the
  /// state before the action): the action to reduce, or `nil` if one
  /// dropped it. The caller runs it as user code.
  @inlinable
  func run(_ action: Action, state: State) -> Action? {
    var action = action
    for link in links {
      switch link.body(action, state, context) {
      case .pass:
        continue
      case .replace(let replacement):
        action = replacement
      case .drop:
        return nil
      }
    }
    return action
  }
}
