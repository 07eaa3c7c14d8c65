/// A middleware's way back to its core: sends new actions.
///
/// ```swift
/// await core.addMiddleware { action, state, context in
///   if case .checkout = action, state.cart.isEmpty {
///     context.send(.showMessage("Your cart is empty"))
///     return .drop
///   }
///   return .pass
/// }
/// ```
public struct MiddlewareContext<Action: Sendable>: Sendable {
  @usableFromInline let deliver: @Sendable (Action) -> SendResult

  /// A context that hands actions to `send`, for testing a middleware on its
  /// own. Cores make their own.
  ///
  /// ```swift
  /// let sent = Events<CartAction>()
  /// let context = MiddlewareContext<CartAction> { action in
  ///   sent.record(action)
  ///   return .accepted
  /// }
  /// #expect(checkoutGuard(.checkout, Cart(), context) == .drop)
  /// ```
  public init(send: @escaping @Sendable (Action) -> SendResult) {
    self.deliver = send
  }

  /// Queues `action` in the core's mailbox, as ``Core/send(_:)`` does: it is
  /// reduced after the action the middleware is looking at (and after the
  /// actions already queued), and it passes the whole middleware chain from
  /// the first middleware, this one included.
  ///
  /// ```swift
  /// context.send(.analytics(.checkoutStarted))
  /// ```
  ///
  /// Never reduced inside the middleware call, nor before the current
  /// action has been reduced: the core finishes one action before it takes
  /// the next. Like an action from ``Core/send(_:)``, it belongs to no
  /// dispatch: the ``EffectHandle`` of the action being looked at does not
  /// cover the effects it starts (``Core/waitUntilIdle()`` waits for them).
  ///
  /// - Returns: ``SendResult/accepted`` if the core accepted the action; it
  ///   will be reduced. ``SendResult/shutDown`` once the core has begun to
  ///   shut down (``Core/hasShutDown``) or has been released: the action
  ///   will not be reduced. During a graceful shutdown, middleware still
  ///   sees what effects send, but what it sends is refused. A core's
  ///   bounded mailbox (`mailboxCapacity`) never refuses it: a middleware
  ///   runs inside the core and cannot wait for room, so, like an effect's
  ///   follow-up, what it sends is the core's own work and counts in
  ///   ``CoreMetrics/queueDepth`` past the capacity.
  @inlinable
  @discardableResult
  public func send(_ action: Action) -> SendResult {
    deliver(action)
  }
}
