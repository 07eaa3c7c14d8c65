/// One prop a ``ModelBridge`` mirrors: where its value is in the core's
/// state, and which property of the model receives it.
///
/// Made with ``prop(_:to:)-(KeyPath<State,Value>Sendable,_)`` and passed to
/// ``Core/bind(_:on:)``:
///
/// ```swift
/// let bridge = await core.bind(
///   .prop(\.count, to: \.count),
///   .prop({ $0.items.isEmpty }, to: \.showsPlaceholder),
///   on: model
/// )
/// ```
///
/// The value is read twice: inside the core, to tell whether it changed
/// (the core then skips publications that changed none of a bridge's
/// props), and on the main actor, to compare it with the model's property,
/// which is assigned only when the two differ.
///
/// Values differ when `==` says so, with one exception: two values that
/// are each unequal to themselves, such as two `Double.nan`s, match, so a
/// prop that stays NaN is not assigned and does not invalidate a view on
/// every change of the state. Values `==` calls equal match, so a prop
/// moving from `0.0` to `-0.0` is not assigned either.
public struct BridgedProp<State: Sendable, Model: AnyObject> {
  /// The model's property, to tell two props writing it apart.
  @usableFromInline let target: AnyKeyPath
  /// Whether two states hold the same value: the core's deduplication.
  @usableFromInline let isEqual: @Sendable (State, State) -> Bool
  /// Assigns the state's value to the model, unless the model holds it.
  @usableFromInline let apply: @MainActor (Model, State) -> Void

  @usableFromInline
  init(
    target: AnyKeyPath,
    isEqual: @escaping @Sendable (State, State) -> Bool,
    apply: @escaping @MainActor (Model, State) -> Void
  ) {
    self.target = target
    self.isEqual = isEqual
    self.apply = apply
  }

  /// Mirrors the value at `source` in the core's state into the model's
  /// property `target`.
  ///
  /// ```swift
  /// let bridge = await core.bind(.prop(\.count, to: \.count), .prop(\.step, to: \.step), on: model)
  /// ```
  ///
  /// A key path to a stored property of the state is read at its offset,
  /// as in ``Core/observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)``.
  ///
  /// - Parameters:
  ///   - source: The value's place in the core's state.
  ///   - target: The model's property that mirrors it.
  @inlinable
  @MainActor
  public static func prop<Value: Equatable & Sendable>(
    _ source: KeyPath<State, Value> & Sendable,
    to target: ReferenceWritableKeyPath<Model, Value>
  ) -> Self {
    prop(selector(source), to: target)
  }

  /// Mirrors the value `select` computes from the core's state into the
  /// model's property `target`.
  ///
  /// ```swift
  /// let bridge = await core.bind(
  ///   .prop({ "\($0.count) items" }, to: \.summary),
  ///   on: model
  /// )
  /// ```
  ///
  /// - Parameters:
  ///   - select: Computes the value. It runs inside the core after each
  ///     publication and on the main actor before an assignment: keep it
  ///     cheap and free of side effects.
  ///   - target: The model's property that mirrors it.
  @inlinable
  @MainActor
  public static func prop<Value: Equatable & Sendable>(
    _ select: @escaping @Sendable (State) -> Value,
    to target: ReferenceWritableKeyPath<Model, Value>
  ) -> Self {
    Self(
      target: target,
      isEqual: { bridgedValuesMatch(select($0), select($1)) },
      apply: { model, state in
        let value = select(state)
        // Only a value the model does not hold: a hand-written `Observable`
        // model notifies on every assignment, and a `didSet` runs on each.
        if !bridgedValuesMatch(model[keyPath: target], value) { model[keyPath: target] = value }
      }
    )
  }
}

/// Whether a bridge treats `a` and `b` as the same value: equal by `==`, or
/// both unequal to themselves (NaN), which `==` alone would call a change
/// on every comparison.
@usableFromInline
func bridgedValuesMatch<Value: Equatable>(_ a: Value, _ b: Value) -> Bool {
  a == b || (a != a && b != b)
}
