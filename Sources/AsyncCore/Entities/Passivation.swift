/// When a registry of entities lets an active entity go: after it has been
/// idle a while, or when more are active than a limit.
///
/// ```swift
/// let carts = Entities(
///   store: store, passivation: Passivation(idleAfter: .seconds(300), maxActive: 100_000),
///   initialState: { Cart(owner: $0) }, reducer: cartReducer)
/// ```
///
/// An entity in use is never passivated: one with an effect in flight,
/// something queued, a caller inside it (a `dispatch` waiting, a
/// `withCore` body), or an observer. So the limit is soft: when every
/// entity over it is in use, more stay active until they are not.
public struct Passivation: Sendable, Hashable {
  /// How long an entity stays active after its last use, on the
  /// registry's clock; `nil` to keep idle entities active.
  ///
  /// ```swift
  /// var policy = Passivation()
  /// policy.idleAfter = .seconds(30)
  /// ```
  public var idleAfter: Duration?
  /// The most entities active at once; `nil` for no limit. Over it, the
  /// least recently used idle ones are passivated.
  ///
  /// ```swift
  /// var policy = Passivation()
  /// policy.maxActive = 10_000
  /// ```
  public var maxActive: Int?

  /// A policy that passivates after `idleAfter`, or over `maxActive`.
  ///
  /// ```swift
  /// let policy = Passivation(idleAfter: .seconds(120), maxActive: 50_000)
  /// ```
  ///
  /// - Parameters:
  ///   - idleAfter: How long an entity stays active after its last use.
  ///   - maxActive: The most entities active at once; at least 1.
  public init(idleAfter: Duration? = .seconds(120), maxActive: Int? = nil) {
    if let maxActive, maxActive < 1 { programmerError("Passivation: maxActive is \(maxActive), not at least 1") }
    if let idleAfter, idleAfter <= .zero { programmerError("Passivation: idleAfter is \(idleAfter), not positive") }
    self.idleAfter = idleAfter
    self.maxActive = maxActive
  }

  /// Entities stay active until the registry shuts down.
  ///
  /// ```swift
  /// let sessions = Entities(store: store, passivation: .never, initialState: Session.init, reducer: sessionReducer)
  /// ```
  public static let never = Passivation(idleAfter: nil, maxActive: nil)
}
