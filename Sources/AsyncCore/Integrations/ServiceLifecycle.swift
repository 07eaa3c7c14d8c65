#if ServiceLifecycle
  import ServiceLifecycle

  /// With the `ServiceLifecycle` trait, a core is a swift-service-lifecycle
  /// `Service`: its ``Core/run()`` runs in a `ServiceGroup` beside the
  /// services that send to it.
  ///
  /// ```swift
  /// let orders = Core(initialState: Orders(), reducer: reduceOrders)
  /// let group = ServiceGroup(
  ///   services: [orders, server], gracefulShutdownSignals: [.sigterm], logger: logger)
  /// try await group.run()   // SIGTERM: every accepted action reduced, the journal synced, then exit
  /// ```
  ///
  /// When the group shuts down gracefully (a SIGTERM, another service
  /// ending), the core shuts down gracefully: it refuses new actions,
  /// reduces every action it accepted, lets its effects finish, syncs and
  /// closes its journal, then `run()` returns. When the group cancels it,
  /// it shuts down at once (``ShutdownMode/immediate``). Put the services
  /// that send to the core after it in the group's list: the group shuts
  /// them down first, in reverse order.
  extension Core: Service {}

  /// With the `ServiceLifecycle` trait, a registry of entities is a
  /// swift-service-lifecycle `Service`.
  ///
  /// ```swift
  /// let carts = Entities(store: store, initialState: { Cart(owner: $0) }, reducer: cartReducer)
  /// let group = ServiceGroup(services: [carts, server], gracefulShutdownSignals: [.sigterm], logger: logger)
  /// try await group.run()   // SIGTERM: every entity passivated and stored, the store closed
  /// ```
  extension Entities: Service {
    /// Waits until the service group shuts down gracefully, cancels this
    /// task, or ``shutdown()`` is called from elsewhere, then returns once
    /// the shutdown has finished: every accepted action reduced, every
    /// active entity stored, the store closed.
    ///
    /// ```swift
    /// let running = Task { try await carts.run() }   // in a ServiceGroup, usually
    /// ```
    ///
    /// Cancellation shuts it down the same way: a registry has no
    /// immediate mode, since its shutdown is what stores its entities.
    public func run() async throws {
      await withTaskGroup(of: Void.self) { group in
        group.addTask { try? await gracefulShutdown() }
        group.addTask { _ = await self.waitUntilFinished() }
        await group.next()
        group.cancelAll()
      }
      // However the wait ended, the registry is stored before it returns.
      await shutdown()
    }
  }
#endif
