/// One case of a parent's action enum that carries a child's actions: how to
/// put a child action in it (`embed`) and how to get one out (`extract`).
///
/// Written once per child, next to the parent's actions, and used wherever
/// the child is placed: by ``Reduce/scope(state:action:dependencies:fileID:line:child:)``
/// and the other compositions, and by the handles on the child
/// (``Core/scope(state:action:)->ScopedCore<ChildState,ChildAction>``),
/// which only embed with it.
///
/// ```swift
/// enum AppAction: Sendable {
///   case counter(CounterAction)
///   case reset
///
///   static let counterCase = ActionCase(embed: AppAction.counter) {
///     if case .counter(let action) = $0 { action } else { nil }
///   }
/// }
/// ```
public struct ActionCase<Action: Sendable, Child: Sendable>: Sendable {
  /// Wraps a child action in the parent's case.
  ///
  /// ```swift
  /// let action = AppAction.counterCase.embed(.increment)   // AppAction.counter(.increment)
  /// core.send(action)
  /// ```
  public let embed: @Sendable (Child) -> Action
  /// The child action inside `action`, or `nil` for any other case.
  ///
  /// ```swift
  /// let child = AppAction.counterCase.extract(.counter(.increment))   // .increment
  /// let other = AppAction.counterCase.extract(.reset)                 // nil
  /// ```
  public let extract: @Sendable (Action) -> Child?

  /// The case that `embed` builds and `extract` takes apart.
  ///
  /// ```swift
  /// static let counterCase = ActionCase(embed: AppAction.counter) {
  ///   if case .counter(let action) = $0 { action } else { nil }
  /// }
  /// ```
  ///
  /// - Important: `extract(embed(child))` must give back `child`; for every
  ///   other case it must give `nil`.
  public init(embed: @escaping @Sendable (Child) -> Action, extract: @escaping @Sendable (Action) -> Child?) {
    self.embed = embed
    self.extract = extract
  }

  /// A case that carries an element's id with its action, as
  /// ``Reduce/forEach(_:action:dependencies:fileID:line:element:)`` and a
  /// handle on an element (``Core/scope(state:id:action:)``) take.
  ///
  /// ```swift
  /// enum ListAction: Sendable {
  ///   case row(id: Row.ID, action: RowAction)
  ///
  ///   static let rowCase = ActionCase(embed: ListAction.row) {
  ///     if case .row(let id, let action) = $0 { (id, action) } else { nil }
  ///   }
  /// }
  /// ```
  public init<ID: Sendable, ElementAction: Sendable>(
    embed: @escaping @Sendable (ID, ElementAction) -> Action,
    extract: @escaping @Sendable (Action) -> (ID, ElementAction)?
  ) where Child == (ID, ElementAction) {
    self.embed = { embed($0.0, $0.1) }
    self.extract = extract
  }
}
