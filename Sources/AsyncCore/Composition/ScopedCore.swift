/// A handle on a part of a core's state: it observes that part and sends
/// the child's actions into the core. Made by
/// ``Core/scope(state:action:)->ScopedCore<ChildState,ChildAction>``
/// and the other `scope` methods, and by scoping a handle further.
///
/// ```swift
/// let counter = core.scope(state: \.counter, action: AppAction.counterCase)
/// counter.send(.increment)
/// for await count in await counter.observe(\.count) {
///   label.text = "\(count)"
/// }
/// ```
///
/// A view, a service or a test given a handle sees only its child: its
/// state, its actions. The handle holds its core; what it observes is
/// registered with the core, with the same selectors, deduplication and
/// buffering policies (see ``Core/observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)``).
///
/// A handle on a child that can leave the state (an optional child, an
/// element) ends with it: loops observing it end after its last value,
/// subscribers stop, and the handle refuses actions (`send` returns `.childRemoved`,
/// `dispatch` throws ``CoreError/childRemoved``). Like its core, it refuses
/// actions once the core has begun to shut down.
public class ScopedCore<State: Sendable, Action: Sendable>: @unchecked Sendable {
  // Safety: the only stored property is a `let` of a Sendable type;
  // subclasses (one, `CoreScope`, in this module) add only `let`s of
  // Sendable types. Not `final` only so that `CoreScope` can hold its
  // core's types without them showing in this one's.
  /// Whether the child is still in the state; `nil` for a child that is
  /// always there.
  @usableFromInline let life: ScopeLife?

  @usableFromInline
  init(life: ScopeLife?) {
    self.life = life
  }

  // MARK: - Actions

  /// Queues the child action `action` in the core, as the parent's action,
  /// and returns at once.
  ///
  /// ```swift
  /// row.send(.toggle)
  /// ```
  ///
  /// - Returns: ``SendResult/accepted`` if the core accepted it.
  ///   ``SendResult/childRemoved`` if the child is known to be gone (the
  ///   core looks for it after each action, whatever reducer removed it);
  ///   otherwise what the core's ``Core/send(_:)`` returned. An action
  ///   accepted in the instant before the child is removed reaches the
  ///   core's diagnostics handler (``CoreDiagnostic/childNotFound(child:action:)``), or, if a child with
  ///   the same id was put back before it is reduced, that child.
  @discardableResult
  public final func send(_ action: Action) -> SendResult {
    if let life, life.isRemoved { return .childRemoved }
    return deliver([action])
  }

  /// Queues the child actions `actions`, in order; see ``send(_:)``.
  ///
  /// ```swift
  /// counter.send(contentsOf: [.increment, .increment])
  /// ```
  @discardableResult
  public final func send(contentsOf actions: some Sequence<Action>) -> SendResult {
    if let life, life.isRemoved { return .childRemoved }
    return deliver(Array(actions))
  }

  /// Queues the child action `action` in the core, as the parent's action,
  /// once the core's mailbox has room: ``Core/enqueue(_:)`` for a child.
  ///
  /// ```swift
  /// for await line in lines { try await row.enqueue(.append(line)) }  // waits while the mailbox is full
  /// ```
  ///
  /// - Throws: ``CoreError/childRemoved`` if the child is known to be gone
  ///   when the call is made; ``CoreError/shutDown`` once the core has begun
  ///   to shut down, before or while this waits; ``CoreError/cancelled`` if
  ///   the task is cancelled while it waits. In each case the action was not
  ///   queued. A child removed while this waits does not end the wait: the
  ///   action is queued, and reaches the core's diagnostics handler as
  ///   ``CoreDiagnostic/childNotFound(child:action:)`` if the child is still
  ///   gone when it is reduced (as a ``send(_:)`` in that instant does).
  public final func enqueue(_ action: Action) async throws(CoreError) {
    if let life, life.isRemoved { throw .childRemoved }
    try await enqueueInCore(action)
  }

  /// Reduces the child action `action` in the core, as the parent's action,
  /// and returns once it is reduced, with a handle on its effects.
  ///
  /// ```swift
  /// try await counter.dispatch(.increment)
  /// ```
  ///
  /// - Throws: ``CoreError/shutDown`` once the core has begun to shut down;
  ///   ``CoreError/childRemoved`` if the child is no longer in the state
  ///   once the actions sent before this call are reduced. Either way the
  ///   action was not reduced.
  @discardableResult
  public final func dispatch(_ action: Action) async throws(CoreError) -> EffectHandle {
    try await dispatchAll([action])
  }

  /// Reduces the child actions `actions` in order, in one hop to the core.
  ///
  /// ```swift
  /// try await counter.dispatch(contentsOf: [.increment, .decrement])
  /// ```
  ///
  /// - Throws: As ``dispatch(_:)``; then none of them was reduced.
  ///
  /// The child's presence is checked once, before the first action. An
  /// action of the batch that removes the child makes the ones after it
  /// reach the core's diagnostics handler as
  /// ``CoreDiagnostic/childNotFound(child:action:)``, unreduced.
  @discardableResult
  public final func dispatch(contentsOf actions: some Sequence<Action>) async throws(CoreError) -> EffectHandle {
    try await dispatchAll(Array(actions))
  }

  /// The child's current state, once every action sent before is reduced.
  ///
  /// ```swift
  /// let count = try await counter.state.count
  /// ```
  ///
  /// - Throws: ``CoreError/childRemoved`` if the child is no longer in the
  ///   state (never, for a child that is always there).
  public var state: State {
    get async throws(CoreError) { try await currentState() }
  }

  /// Whether the core has begun to shut down: the handle then refuses
  /// actions, as its core does.
  ///
  /// ```swift
  /// if counter.hasShutDown { return }
  /// ```
  public var hasShutDown: Bool { fatalAbstract() }

  /// Whether the child is known to be gone (see ``send(_:)``); `false` for a
  /// child that is always there.
  ///
  /// ```swift
  /// if row.isRemoved { dismiss() }
  /// ```
  public final var isRemoved: Bool { life?.isRemoved ?? false }

  // MARK: - What the core behind the handle does

  func deliver(_ actions: [Action]) -> SendResult { fatalAbstract() }

  func dispatchAll(_ actions: [Action]) async throws(CoreError) -> EffectHandle { fatalAbstract() }

  func enqueueInCore(_ action: Action) async throws(CoreError) { fatalAbstract() }

  func currentState() async throws(CoreError) -> State { fatalAbstract() }

  /// The core's count of observers, which the handle's observers join.
  @usableFromInline
  var counter: ObserverCounter { fatalAbstract() }

  /// Registers an observer or subscriber whose group `make` builds over the
  /// child's state (see `Core.attach`); `keyPath`, the observed value's key
  /// path in the child's state, lets observers of one value share a group.
  @usableFromInline
  func attach(
    keyPath: AnyKeyPath?,
    policy: BufferingPolicy,
    isSubscriber: Bool,
    api: StaticString,
    make: @escaping @Sendable ((any Registrations)?) -> GroupJoin<State?>
  ) async { fatalAbstract() }

  func fixedChild<ChildState: Sendable, ChildAction: Sendable>(
    state: KeyPath<State, ChildState> & Sendable,
    embed: @escaping @Sendable (ChildAction) -> Action
  ) -> ScopedCore<ChildState, ChildAction> { fatalAbstract() }

  func child<ChildState: Sendable, ChildAction: Sendable>(
    step: ScopeStep,
    get: @escaping @Sendable (State) -> ChildState?,
    embed: @escaping @Sendable (ChildAction) -> Action,
    api: StaticString
  ) async -> ScopedCore<ChildState, ChildAction>? { fatalAbstract() }

  private func fatalAbstract(_ function: StaticString = #function) -> Never {
    programmerError("internal: ScopedCore.\(function) is implemented by CoreScope")
  }
}
