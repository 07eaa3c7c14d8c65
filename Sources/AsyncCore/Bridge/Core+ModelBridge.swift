import Observation

// The `@Observable` bridge, built on a synchronous subscriber: the core
// compares the props, the bridge hops to the main actor once per burst.
extension Core {
  /// Mirrors chosen props of the core's state into an `@Observable` model,
  /// on the main actor, assigning each only when it changes.
  ///
  /// ```swift
  /// @MainActor @Observable final class CounterModel {
  ///   var count = 0
  ///   var isEven = true
  ///   @ObservationIgnored var bridge: ModelBridge?
  /// }
  ///
  /// let model = CounterModel()
  /// model.bridge = await core.bind(
  ///   .prop(\.count, to: \.count),
  ///   .prop({ $0.count % 2 == 0 }, to: \.isEven),
  ///   on: model
  /// )
  /// // A view that reads `model.count` is invalidated when the count
  /// // changes, never when another part of the state does.
  /// ```
  ///
  /// When this returns, the model holds the props of the core's current
  /// state (the state after every action the calling task sent before).
  /// From then on, after each publication in which one of the props
  /// changed, the bridge assigns on the main actor those that differ from
  /// the model's, all in one main-actor job: a view never sees one prop of
  /// a change without the others. A burst of changes is applied once, with
  /// the newest state; a prop that changed and changed back in between is
  /// not assigned at all.
  ///
  /// It runs on the main actor, where the key paths of a `@MainActor`
  /// model's properties can be formed: call it from a view's `.task` or
  /// from the model's own code. In the core it is one synchronous
  /// subscriber, which compares the props after each publication and keeps
  /// the last state it let through (a copy that shares the storage of
  /// arrays, strings and dictionaries).
  ///
  /// - Parameters:
  ///   - props: What to mirror: ``BridgedProp/prop(_:to:)-(KeyPath<State,Value>Sendable,_)``
  ///     pairs of a place in the state and a property of the model.
  ///   - model: The model, held weakly. A `@MainActor` class is `Sendable`.
  /// - Returns: The bridge. Keep it (in the model, as above) for as long as
  ///   the model should follow the core: see ``ModelBridge`` for how a
  ///   bridge ends.
  /// - Important: Bind each property of a model from one bridge only: two
  ///   bridges writing one property take turns overwriting it. Passing no
  ///   prop, or two props with the same target, is a programmer error: the
  ///   program stops with a message.
  @MainActor
  public func bind<Model: AnyObject & Observable & Sendable>(
    _ props: BridgedProp<State, Model>...,
    on model: Model
  ) async -> ModelBridge {
    guard !props.isEmpty else { programmerError("bind(_:on:) was given no prop to mirror") }
    var positions: [AnyKeyPath: Int] = [:]
    for (position, prop) in zip(1..., props) {
      if let first = positions.updateValue(position, forKey: prop.target) {
        programmerError(
          "bind(_:on:) was given two props for one property of the model: props \(first) and \(position), "
            + "counting from 1 in the order given (\(prop.target)); each property needs one source")
      }
    }
    let link = BridgeLink(
      model: model, props: props, registration: SubscriberRegistration(counter: observerCounter),
      flushCore: { [weak self] in await self?.publishForBridge() })
    let comparisons = props.map(\.isEqual)
    await joinBridge(link) { old, new in
      for isEqual in comparisons where !isEqual(old, new) { return false }
      return true
    }
    // The state handed as the bridge joined, so the model is up to date on return.
    link.applyScheduled()
    return ModelBridge(connection: link)
  }

  /// Adds the bridge's subscriber: called with the whole state, after each
  /// publication in which `isDuplicate` finds a prop changed.
  func joinBridge<Model>(
    _ link: BridgeLink<State, Model>,
    isDuplicate: @escaping @Sendable (State, State) -> Bool
  ) async {
    let member = SubscriberMember(registration: link.registration) { link.stage($0) }
    await attach(key: nil, policy: .latest, isSubscriber: true, api: "bind(_:on:)") { existing in
      (.of(member, joining: existing, select: { $0 }, isDuplicate: isDuplicate), ())
    }
  }

  /// Reduces what was accepted and publishes it, as reading ``state`` does,
  /// without copying the state out.
  func publishForBridge() async {
    checkNotRunningUserCode("ModelBridge.update()")
    await catchUpQueued()
  }
}
