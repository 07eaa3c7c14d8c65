/// A reducer as a value: what ``Core`` runs for each action, and what
/// bigger reducers are built from.
///
/// ```swift
/// let counter = Reduce<Counter, CounterAction> { state, action in
///   switch action {
///   case .increment: state.count += 1
///   case .decrement: state.count -= 1
///   }
/// }
///
/// let app = Reduce<App, AppAction>.combine([
///   .scope(state: \.counter, action: AppAction.counterCase, child: counter),
///   Reduce { state, action in
///     if case .reset = action { state = App() }
///   },
/// ])
/// let core = Core(initialState: App(), reducer: app)
/// ```
///
/// A feature is written once, over its own state and actions, and placed in
/// a parent with ``scope(state:action:dependencies:fileID:line:child:)``, an optional
/// child with ``ifLet(_:action:dependencies:fileID:line:then:)``, and the
/// elements of a collection with
/// ``forEach(_:action:dependencies:fileID:line:element:)``. Its effects are
/// lifted into the parent's actions, its cancel ids are kept apart from its
/// siblings', and those of a child that leaves the state are cancelled.
public struct Reduce<State, Action: Sendable>: Sendable {
  /// The reducer's closure, kept apart when it starts no effects, for the
  /// core's pure fast path.
  @usableFromInline
  enum Body: Sendable {
    case pure(@Sendable (_ state: inout State, _ action: Action) -> Void)
    case effectful(@Sendable (_ state: inout State, _ action: Action) -> Effect<Action>)
  }

  @usableFromInline let body: Body

  @inlinable
  init(body: Body) {
    self.body = body
  }

  /// A reducer that may return effects.
  ///
  /// ```swift
  /// let search = Reduce<Search, SearchAction> { state, action in
  ///   switch action {
  ///   case .queryChanged(let query):
  ///     state.query = query
  ///     return .run { send in await send(.loaded(try await send.dependencies.api.search(query))) }
  ///   case .loaded(let results):
  ///     state.results = results
  ///     return .none
  ///   }
  /// }
  /// ```
  // Disfavoured: a multi-statement closure with no `return` fits both
  // initializers, and is the pure one.
  @_disfavoredOverload
  @inlinable
  public init(_ reduce: @escaping @Sendable (_ state: inout State, _ action: Action) -> Effect<Action>) {
    self.body = .effectful(reduce)
  }

  /// A reducer that starts no effects: a core runs it on its pure fast
  /// path, which never builds an ``Effect``.
  ///
  /// ```swift
  /// let counter = Reduce<Counter, CounterAction> { state, action in
  ///   if case .increment = action { state.count += 1 }
  /// }
  /// let core = Core(initialState: Counter(), reducer: counter)
  /// ```
  ///
  /// - Important: A closure of one expression that calls a function
  ///   returning an ``Effect`` (`Reduce { state, _ in save(state) }`) is
  ///   taken as this kind, and the effect is dropped; the compiler warns
  ///   that the result is unused. Write `return save(state)`.
  @inlinable
  public init(_ reduce: @escaping @Sendable (_ state: inout State, _ action: Action) -> Void) {
    self.body = .pure(reduce)
  }

  /// Reduces `action` into `state` and returns the effects to run: what a
  /// core does with it, and what a hand-written parent may call.
  ///
  /// ```swift
  /// var state = Counter()
  /// _ = counter.reduce(into: &state, action: .increment)
  /// ```
  @inlinable
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch body {
    case .pure(let reduce):
      reduce(&state, action)
      return .none
    case .effectful(let reduce):
      return reduce(&state, action)
    }
  }

  /// The body as a closure that returns effects, taken once where a
  /// composition is built: no switch per action.
  @inlinable
  var effectfulBody: @Sendable (_ state: inout State, _ action: Action) -> Effect<Action> {
    switch body {
    case .effectful(let reduce):
      return reduce
    case .pure(let reduce):
      return { state, action in
        reduce(&state, action)
        return .none
      }
    }
  }

  /// Runs `reducers` on each action, in the order given, each seeing the
  /// state the ones before it left; their effects are merged.
  ///
  /// ```swift
  /// let app = Reduce<App, AppAction>.combine([
  ///   .scope(state: \.counter, action: AppAction.counterCase, child: counter),
  ///   appLogic,
  /// ])
  /// ```
  ///
  /// List a child before the parent logic that reacts to that child's
  /// actions: the parent then sees the state the child left. When every
  /// reducer combined starts no effects, neither does the combination: a
  /// core runs it on its pure fast path.
  @inlinable
  public static func combine(_ reducers: [Reduce]) -> Reduce {
    switch reducers.count {
    case 0: return Reduce(body: .pure { _, _ in })
    case 1: return reducers[0]
    default:
      var pureBodies: [@Sendable (inout State, Action) -> Void] = []
      for reducer in reducers {
        guard case .pure(let reduce) = reducer.body else { break }
        pureBodies.append(reduce)
      }
      if pureBodies.count == reducers.count {
        let bodies = pureBodies
        return Reduce { state, action in
          for reduce in bodies { reduce(&state, action) }
        }
      }
      let bodies = reducers.map(\.effectfulBody)
      return Reduce { state, action in
        var effect = Effect<Action>.none
        for body in bodies { effect = effect.merging(body(&state, action)) }
        return effect
      }
    }
  }
}

// MARK: - Replay

extension Reduce.Body {
  /// The one replay rule, for recovery, `Core.replay`, `TestCore.replay` and
  /// the inspector: reduce `action` and drop what the reducer returns,
  /// `.send`s too. A journal or a recording holds the actions effects sent.
  @inlinable
  func replay(_ action: Action, into state: inout State) {
    switch self {
    case .pure(let reduce): reduce(&state, action)
    case .effectful(let reduce): _ = reduce(&state, action)
    }
  }
}

extension Reduce {
  /// Reduces `action` into `state` as a replay does (see `Body.replay`).
  package func replay(_ action: Action, into state: inout State) {
    body.replay(action, into: &state)
  }
}
