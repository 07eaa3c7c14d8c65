/// The one kind of ``ScopedCore``: a child of a `Core` at `path`.
final class CoreScope<RootState: Sendable, RootAction: Sendable, State: Sendable, Action: Sendable>:
  // Safety: every stored property (here and in `ScopedCore`) is a `let`
  // of a Sendable type.
  ScopedCore<State, Action>, @unchecked Sendable
{
  let core: Core<RootState, RootAction>
  let path: ScopePath
  /// The child in the root state; `nil` once it is gone.
  let get: @Sendable (RootState) -> State?
  let embed: @Sendable (Action) -> RootAction

  init(
    core: Core<RootState, RootAction>,
    path: ScopePath,
    life: ScopeLife?,
    get: @escaping @Sendable (RootState) -> State?,
    embed: @escaping @Sendable (Action) -> RootAction
  ) {
    self.core = core
    self.path = path
    self.get = get
    self.embed = embed
    super.init(life: life)
  }

  override var hasShutDown: Bool { core.hasShutDown }

  override func deliver(_ actions: [Action]) -> SendResult {
    if actions.count == 1 { return core.send(embed(actions[0])) }
    return core.send(contentsOf: actions.map(embed))
  }

  override func enqueueInCore(_ action: Action) async throws(CoreError) {
    try await core.enqueue(embed(action))
  }

  override func dispatchAll(_ actions: [Action]) async throws(CoreError) -> EffectHandle {
    let embedded = actions.map(embed)
    guard let life else { return try await core.dispatch(embedded, toChildPresentIn: nil, life: nil) }
    if life.isRemoved { throw .childRemoved }
    let get = self.get
    return try await core.dispatch(embedded, toChildPresentIn: { get($0) != nil }, life: life)
  }

  override func currentState() async throws(CoreError) -> State {
    try await core.scopedState(get, life: life)
  }

  override var counter: ObserverCounter { core.observerCounter }

  override func attach(
    keyPath: AnyKeyPath?,
    policy: BufferingPolicy,
    isSubscriber: Bool,
    api: StaticString,
    make: @escaping @Sendable ((any Registrations)?) -> GroupJoin<State?>
  ) async {
    // Observers of one value through handles on one child share a group,
    // keyed by the child's path and the value's key path in the child.
    let key = keyPath.map {
      SelectionKey(keyPath: $0, policy: policy, isSubscriber: isSubscriber, scope: path)
    }
    let get = self.get
    await core.attach(
      key: key, policy: policy, isSubscriber: isSubscriber, life: life, endedBy: path.lifetimeIDs, api: api
    ) { existing in
      (make(existing).reading(get), ())
    }
  }

  override func fixedChild<ChildState: Sendable, ChildAction: Sendable>(
    state: KeyPath<State, ChildState> & Sendable,
    embed: @escaping @Sendable (ChildAction) -> Action
  ) -> ScopedCore<ChildState, ChildAction> {
    let get = self.get
    let child = selector(state)
    let embedHere = self.embed
    return CoreScope<RootState, RootAction, ChildState, ChildAction>(
      core: core, path: path.appending(.fixed(state)), life: life,
      get: { get($0).map(child) },
      embed: { embedHere(embed($0)) })
  }

  override func child<ChildState: Sendable, ChildAction: Sendable>(
    step: ScopeStep,
    get childGet: @escaping @Sendable (State) -> ChildState?,
    embed: @escaping @Sendable (ChildAction) -> Action,
    api: StaticString
  ) async -> ScopedCore<ChildState, ChildAction>? {
    if let life, life.isRemoved { return nil }
    let get = self.get
    let embedHere = self.embed
    return await core.makeScope(
      path: path.appending(step), get: { get($0).flatMap(childGet) }, embed: { embedHere(embed($0)) }, api: api)
  }
}
