import Synchronization

/// Identifies one middleware installed on a core, to remove it.
///
/// Returned by ``Core/addMiddleware(_:)``:
///
/// ```swift
/// let logging = await core.addMiddleware { action, _, _ in
///   print("action:", action)
///   return .pass
/// }
/// // …
/// await core.removeMiddleware(logging)
/// ```
///
/// Every call to `addMiddleware` returns a new id, unique in the process, so
/// an id removes at most the middleware it was returned for, on the core
/// that returned it.
public struct MiddlewareID: Hashable, Sendable, CustomStringConvertible {
  @usableFromInline let rawValue: UInt64

  init() {
    rawValue = nextMiddlewareID.add(1, ordering: .relaxed).newValue
  }

  /// The id as `MiddlewareID(n)`, for logs, where `n` is unique in the
  /// process.
  ///
  /// ```swift
  /// let id = await core.addMiddleware { _, _, _ in .pass }
  /// print(id)   // MiddlewareID(1)
  /// ```
  public var description: String { "MiddlewareID(\(rawValue))" }
}

/// The source of ``MiddlewareID``s: a counter, not a registry, so nothing
/// needs resetting between tests; only uniqueness matters (relaxed).
private let nextMiddlewareID = Atomic<UInt64>(0)
