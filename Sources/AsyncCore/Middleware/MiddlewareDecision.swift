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
  case pass
  /// `action` goes on in place of the one the middleware was given, to the
  /// next middleware and then to the reducer; the original is not reduced.
  case replace(with: Action)
  /// The action stops here: no later middleware sees it and it is not
  /// reduced, logged (``Core/actions(buffering:)``) or published.
  case drop
}

extension MiddlewareDecision: Equatable where Action: Equatable {}
