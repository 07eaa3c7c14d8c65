// Who holds an entity: the callers `acquire` makes users and `release`
// lets go, and the in-memory activation made under the lock.

extension Entities {
  /// Whether an entity activates under the registry's lock, with no task:
  /// in memory, with no `prepare` to await.
  @inlinable
  var activatesAtOnce: Bool { store == nil && prepare == nil }

  /// Makes `id`'s core in memory and marks it active, under the lock.
  @inlinable
  func activateAtOnce(_ id: ID, in registry: inout EntityRegistry<ID, State, Action>) {
    let core = Core(
      initialState: makeState(id), dependencies: dependencies, clock: clock, mailboxCapacity: mailboxCapacity,
      diagnostics: diagnostics, reducer: reducer)
    var entry = EntityRegistry<ID, State, Action>.Entry()
    entry.life.activatedAtOnce(Handle(core: core, observers: 0))
    registry.entities[id] = entry
    registry.resident += 1
    registry.activations += 1
  }

  /// Tells the event streams, outside the lock, that `id` activated at once.
  @inlinable
  func announceActivated(_ id: ID) {
    let sinks = registry.withLock { Array($0.eventSinks.values) }
    for sink in sinks { sink.yield(.activated(id)) }
  }

  /// Waits until `id` is active and makes the caller one of its users.
  @inlinable
  func acquire(_ id: ID) async throws(CoreError) -> Handle {
    let now = passivation == .never ? .zero : self.now()
    var atOnce = false
    let ready = registry.withLock { registry -> Handle? in
      if activatesAtOnce, !registry.isShuttingDown, registry.entities[id] == nil {
        activateAtOnce(id, in: &registry)
        atOnce = true
      }
      guard !registry.isShuttingDown, let entry = registry.entities[id], case .active(let handle) = entry.life.phase,
        !handle.core.hasShutDown
      else { return nil }
      guard case .proceed(let handle) = registry.entities[id]!.life.use(waiter: 0) else { return nil }
      if passivation != .never { registry.touch(id, at: now) }
      return handle
    }
    if atOnce { announceActivated(id) }
    if let ready { return ready }
    let waiter = registry.withLock { $0.makeID() }
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Result<Handle, CoreError>, Never>) in
        let (answer, activate, stopped) = registry.withLock {
          registry -> (Result<Handle, CoreError>?, Bool, Handle?) in
          guard !registry.isShuttingDown else { return (.failure(.shutDown), false, nil) }
          // Read under the lock `onCancel` takes: cancelled before this,
          // the flag is already set; after, `onCancel` finds the waiter.
          guard !Task.isCancelled else { return (.failure(.cancelled), false, nil) }
          let stopped = registry.retireIfStopped(id)
          switch registry.entities[id, default: .init()].life.use(waiter: waiter) {
          case .proceed(let handle):
            if passivation != .never { registry.touch(id, at: now) }
            return (.success(handle), false, stopped)
          case .activateAndWait:
            registry.waiters[waiter] = continuation
            registry.resident += 1
            registry.transitions += 1
            return (nil, true, stopped)
          case .wait:
            registry.waiters[waiter] = continuation
            return (nil, false, stopped)
          }
        }
        if let answer { continuation.resume(returning: answer) }
        if let stopped { startPassivation(of: id, stopped, force: true) }
        if activate { startActivation(of: id) }
      }
    } onCancel: {
      let left = registry.withLock { registry -> CheckedContinuation<Result<Handle, CoreError>, Never>? in
        guard registry.entities[id]?.life.cancelWaiter(waiter) == true else { return nil }
        return registry.waiters.removeValue(forKey: waiter)
      }
      left?.resume(returning: .failure(.cancelled))
    }
    return try result.get()
  }

  /// The caller is done with `id`.
  @inlinable
  func release(_ id: ID) {
    let now = passivation == .never ? .zero : self.now()
    let waiting = registry.withLock { registry -> [CheckedContinuation<Void, Never>] in
      guard registry.entities[id] != nil else { programmerError("Entities.release: \(id) is not resident") }
      registry.entities[id]!.life.release()
      if passivation != .never { registry.touch(id, at: now) }
      return registry.isShuttingDown ? registry.changed() : []
    }
    for waiter in waiting { waiter.resume() }
  }
}
