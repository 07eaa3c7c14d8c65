// Middleware: user code that sees every action before the reducer, behind
// one flag on `reduceOne`, so a core without middleware keeps its fast paths.
extension Core {
  /// Installs `middleware` at the end of the chain: every action from now on
  /// passes it before the reducer, after the middleware added before it.
  /// A middleware is code that sees each action, with the state before that
  /// action, and decides what goes on (see ``MiddlewareDecision``). It runs
  /// inside the core, synchronously, one action at a time, and must be quick
  /// and never block. New actions go through its context
  /// (``MiddlewareContext/send(_:)``), never by reducing: a middleware only
  /// ever sees values.
  ///
  /// ```swift
  /// let log = await core.addMiddleware { action, state, _ in
  ///   print("\(action) at count \(state.count)")
  ///   return .pass
  /// }
  ///
  /// await core.addMiddleware { action, _, _ in
  ///   if case .setAge(let age) = action, !(0...150).contains(age) { return .drop }
  ///   return .pass
  /// }
  /// ```
  ///
  /// Every action passes the chain, whichever way it came: ``send(_:)``,
  /// ``send(contentsOf:)``, ``dispatch(_:)``, ``dispatch(contentsOf:)``,
  /// what effects send, and what `.send` effects return
  /// (``Effect/send(_:)``). Each middleware gets the action the one before
  /// passed on (replaced, perhaps) and the state before that action. The
  /// reducer gets what the last one passed on; that is what
  /// ``actions(buffering:)`` logs and what observers see the result of.
  ///
  /// Actions this task sent before the call are reduced first, without the
  /// new middleware; those it sends after the call pass it.
  ///
  /// - Returns: The id that removes it (``removeMiddleware(_:)``).
  /// - Important: A dropped action is not reduced, and nothing reports it:
  ///   ``dispatch(_:)`` of one returns normally, as for an action the reducer
  ///   ignores, and its ``EffectHandle`` covers no effect. Middleware runs
  ///   inside the core: it may call ``MiddlewareContext/send(_:)`` (or
  ///   ``send(_:)``), which queues the action for after the current one; it
  ///   must not reach back into the core (through `assumeIsolated`: reading
  ///   ``state``, dispatching, adding or removing middleware): that stops the
  ///   program with a message, as for reducers, selectors and subscribers.
  ///   The core keeps the middleware until it is removed or the core has
  ///   shut down; capture the core weakly if at all (the context's `send`
  ///   needs no reference).
  @discardableResult
  public func addMiddleware(
    _ middleware:
      @escaping @Sendable (
        _ action: Action, _ state: State, _ context: MiddlewareContext<Action>
      ) -> MiddlewareDecision<Action>
  ) -> MiddlewareID {
    checkNotRunningUserCode()
    flushMailbox()
    var chain = middlewareChain ?? MiddlewareChain(context: makeMiddlewareContext())
    let id = chain.add(middleware)
    middlewareChain = chain
    // Stopped: nothing is reduced any more, so nothing is kept either.
    if lifecycle.isStopped { middlewareChain = nil }
    hasMiddleware = middlewareChain != nil || journal != nil
    return id
  }

  /// Removes the middleware `id` names: actions from now on no longer pass it.
  ///
  /// ```swift
  /// let log = await core.addMiddleware(logEveryAction)
  /// try await core.dispatch(.load)      // logged
  /// await core.removeMiddleware(log)
  /// try await core.dispatch(.refresh)   // not logged
  /// ```
  ///
  /// Actions this task sent before the call are reduced first, and pass it;
  /// an action it sent itself (through its context) that has not been
  /// reduced yet does not. The others keep their order.
  ///
  /// - Returns: `true` if the middleware was installed; `false` if it had
  ///   already been removed, belongs to another core, or the core has shut
  ///   down (which removes every middleware): then nothing changes.
  /// - Important: Like ``addMiddleware(_:)``, it cannot be called from
  ///   inside the core (a middleware, reducer, selector or subscriber): that
  ///   stops the program with a message.
  @discardableResult
  public func removeMiddleware(_ id: MiddlewareID) -> Bool {
    checkNotRunningUserCode()
    flushMailbox()
    guard var chain = middlewareChain else { return false }
    let removed = chain.remove(id)
    // An empty chain is dropped, so its core is back on the paths with no
    // middleware at all.
    middlewareChain = chain.links.isEmpty ? nil : chain
    hasMiddleware = middlewareChain != nil || journal != nil
    return removed
  }

  /// Runs the chain on `action`, then reduces what it passed on, if anything.
  @inlinable
  func reduceThroughMiddleware(_ action: Action, lineage: inout Lineage?) {
    guard let chain = middlewareChain else {
      // A durable core takes this path for every action.
      if journal != nil, !stageForJournal(action) { return }
      reduceOneAfterMiddleware(action, lineage: &lineage)
      return
    }
    let state = currentState  // the state before this action, one read
    guard let passed = runningUserCode({ chain.run(action, state: state) }) else { return }
    if journal != nil, !stageForJournal(passed) { return }
    reduceOneAfterMiddleware(passed, lineage: &lineage)
  }

  /// Drops every middleware once the core has stopped: nothing passes them
  /// any more, and what they hold (a core captured strongly, a client) goes.
  func removeAllMiddleware() {
    middlewareChain = nil
    hasMiddleware = journal != nil
  }

  /// The context middleware sends through: queues as `send` does but past a
  /// full mailbox (it cannot wait inside the core), holding the core weakly.
  func makeMiddlewareContext() -> MiddlewareContext<Action> {
    let reference = CoreReference(self)
    return MiddlewareContext { action in
      guard let core = reference.core else { return .shutDown }
      return core.handle(core.mailbox.send(Envelope(action: action, lineage: nil), fromEffect: false, fromInside: true))
    }
  }
}
