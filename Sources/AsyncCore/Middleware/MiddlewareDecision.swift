/// What a middleware decides about the action it was given: let it go on,
/// put another action in its place, or stop it.
///
/// ```swift
/// await core.addMiddleware { action, state, context in
///   switch action {
///   case .setName(let name) where name.isEmpty: return .drop
///   case .setName(let name): return .replace(with: .setName(name.trimmed()))
///   default: return .pass
///   }
/// }
/// ```
public enum MiddlewareDecision<Action: Sendable>: Sendable {
  /// The action goes on unchanged, to the next middleware and then to the
  /// reducer.
  ///
  /// ```swift
  /// await core.addMiddleware { action, _, _ in
  ///   print("action:", action)
  ///   return .pass
  /// }
  /// ```
  case pass
  /// `action` goes on in place of the one the middleware was given, to the
  /// next middleware and then to the reducer; the original is not reduced.
  ///
  /// ```swift
  /// await core.addMiddleware { action, _, _ in
  ///   if case .setStep(let step) = action, step > 100 { return .replace(with: .setStep(100)) }
  ///   return .pass
  /// }
  /// ```
  case replace(with: Action)
  /// The action stops here: no later middleware sees it and it is not
  /// reduced, logged (``Core/actions(buffering:)``) or published.
  ///
  /// ```swift
  /// await core.addMiddleware { action, state, _ in
  ///   if case .increment = action, state.count >= 10 { return .drop }   // a cap
  ///   return .pass
  /// }
  /// ```
  case drop
}

extension MiddlewareDecision: Equatable where Action: Equatable {}
