// Activation, passivation, the idle sweeper and the shutdown. Decisions
// about one entity are its `EntityLifecycle`'s; this file runs them.

extension Entities {
  // MARK: - Activation

  @usableFromInline
  func startActivation(of id: ID) {
    Task { await self.activate(id) }
  }

  /// Makes `id`'s core, from the store's journal when there is a store,
  /// then hands it what waited.
  func activate(_ id: ID) async {
    let started = now()
    let outcome: Swift.Result<Handle, CoreError>
    do throws(CoreError) {
      let core: Core<State, Action>
      if let store {
        let journal: any CoreJournal<State, Action>
        do {
          journal = try await store.journal(for: id)
        } catch {
          throw .journal(error)
        }
        core = try await Core(
          initialState: makeState(id), journal: journal, dependencies: dependencies, clock: clock,
          mailboxCapacity: mailboxCapacity, diagnostics: diagnostics, reducer: reducer)
      } else {
        core = Core(
          initialState: makeState(id), dependencies: dependencies, clock: clock, mailboxCapacity: mailboxCapacity,
          diagnostics: diagnostics, reducer: reducer)
      }
      if let prepare { await prepare(id, core) }
      outcome = .success(Handle(core: core, observers: core.metrics.observers))
    } catch {
      outcome = .failure(error)
    }
    let elapsed = now() - started
    switch outcome {
    case .success(let handle): activated(id, handle, after: elapsed)
    case .failure(let error): activationFailed(id, error)
    }
  }

  private func activated(_ id: ID, _ handle: Handle, after elapsed: Duration) {
    let now = self.now()
    let limit = passivation.maxActive
    let (waiters, evicted, changed, sinks) = registry.withLock { registry in
      let released = registry.entities[id]!.life.activated(handle)
      // Under the lock, before any later send reaches the core directly.
      if !released.pending.isEmpty { _ = handle.core.sendWaiting(released.pending) }
      registry.transitions -= 1
      registry.activations += 1
      registry.activationTime += elapsed
      if passivation != .never { registry.touch(id, at: now) }
      let evicted = limit.map { registry.evict(toAtMost: $0, at: now) } ?? []
      return (
        registry.takeWaiters(released.waiters), evicted, registry.changed(), Array(registry.eventSinks.values)
      )
    }
    for waiter in waiters { waiter.resume(returning: .success(handle)) }
    if passivation.idleAfter != nil { parking.wake() }
    for waiter in changed { waiter.resume() }
    for sink in sinks { sink.yield(.activated(id)) }
    for (id, handle) in evicted { startPassivation(of: id, handle) }
  }

  private func activationFailed(_ id: ID, _ error: CoreError) {
    let (refused, waiters, changed, sinks) = registry.withLock { registry in
      let refused = registry.entities[id]!.life.activationFailed()
      if registry.entities[id]!.life.isForgettable { registry.entities[id] = nil }
      registry.resident -= 1
      registry.transitions -= 1
      registry.activationFailures += 1
      return (
        refused.pending, registry.takeWaiters(refused.waiters), registry.changed(), Array(registry.eventSinks.values)
      )
    }
    let cause: any Error = if case .journal(let inner) = error { inner } else { error }
    let entity = String(describing: id)
    diagnostics(
      EffectFailure(error: CoreDiagnostic.activationFailed(entity: entity, error: cause), fileID: #fileID, line: #line))
    for action in refused {
      diagnostics(
        EffectFailure(
          error: CoreDiagnostic.notActivated(entity: entity, action: action, error: cause), fileID: #fileID, line: #line
        ))
    }
    for waiter in waiters { waiter.resume(returning: .failure(error)) }
    for waiter in changed { waiter.resume() }
    for sink in sinks { sink.yield(.activationFailed(id, cause)) }
  }

  // MARK: - Passivation

  @usableFromInline
  func startPassivation(of id: ID, _ handle: Handle, force: Bool = false) {
    Task { await self.passivate(id, handle, force: force) }
  }

  /// Stores `id` and shuts its core down; or, if it turned out to be in
  /// use or its snapshot failed, leaves it active with what waited.
  func passivate(_ id: ID, _ handle: Handle, force: Bool) async {
    let outcome = await handle.core.passivate(observers: handle.observers, waitingForEffects: force)
    let now = self.now()
    var failure: (any Error)?
    let gone: Bool
    switch outcome {
    case .passivated, .stopped: gone = true
    case .busy: gone = false
    case .failed(let error):
      failure = error
      // At the shutdown the core stopped anyway; its records hold its state.
      gone = force
    }
    let (reactivate, waiters, changed, sinks) = registry.withLock {
      registry -> (
        Bool, [CheckedContinuation<Swift.Result<Handle, CoreError>, Never>], [CheckedContinuation<Void, Never>],
        [AsyncStream<EntityEvent<ID>>.Continuation]
      ) in
      registry.transitions -= 1
      registry.passivating -= 1
      if failure != nil { registry.passivationFailures += 1 }
      var reactivate = false
      var waiters: [CheckedContinuation<Swift.Result<Handle, CoreError>, Never>] = []
      if gone {
        registry.passivations += 1
        switch registry.entities[id]!.life.passivated() {
        case .forget:
          registry.entities[id] = nil
          registry.resident -= 1
        case .activate:
          registry.transitions += 1
          reactivate = true
        }
      } else {
        let released = registry.entities[id]!.life.passivationRefused()
        if !released.pending.isEmpty { _ = handle.core.sendWaiting(released.pending) }
        waiters = registry.takeWaiters(released.waiters)
        if passivation != .never { registry.touch(id, at: now) }
      }
      return (reactivate, waiters, registry.changed(), Array(registry.eventSinks.values))
    }
    if let failure {
      diagnostics(
        EffectFailure(
          error: CoreDiagnostic.passivationFailed(entity: String(describing: id), error: failure), fileID: #fileID,
          line: #line))
    }
    for waiter in waiters { waiter.resume(returning: .success(handle)) }
    for waiter in changed { waiter.resume() }
    for sink in sinks {
      if let failure { sink.yield(.passivationFailed(id, failure)) }
      if gone { sink.yield(.passivated(id)) }
    }
    if reactivate { await activate(id) }
  }

  // MARK: - Timers

  /// The idle sweeper and the store's interval sync, each a task on the
  /// registry's clock that holds the registry weakly.
  func startTimers() {
    var tasks: [Task<Void, Never>] = []
    if let idle = passivation.idleAfter {
      let weakSelf = WeakEntities(self)
      tasks.append(Task { await Self.sweep(weakSelf, idleAfter: idle) })
    }
    if let interval = store?.syncInterval {
      let clock = self.clock
      tasks.append(
        Task { [weak self] in
          while true {
            do { try await clock.sleep(for: interval) } catch { return }
            guard let self else { return }
            await self.syncStore()
          }
        })
    }
    timers.withLock { $0 = tasks }
  }

  func syncStore() async {
    guard let store else { return }
    do {
      try await store.sync()
    } catch {
      diagnostics(EffectFailure(error: CoreDiagnostic.syncFailed(error), fileID: #fileID, line: #line))
    }
  }

  /// What the idle sweeper does after a sweep.
  enum SweepNext {
    case sleep(Duration)
    case park
    case stop
  }

  /// The idle sweeper's loop: it holds the registry only while it sweeps,
  /// so a registry its owner dropped without `shutdown` is freed (and its
  /// `deinit` wakes a parked sweeper, which then ends).
  static func sweep(_ weakRegistry: WeakEntities<ID, State, Action>, idleAfter idle: Duration) async {
    while !Task.isCancelled {
      guard let next = weakRegistry.value?.sweepOnce(idleAfter: idle) else { return }
      switch next {
      case .stop:
        return
      case .sleep(let delay):
        guard let clock = weakRegistry.value?.clock else { return }
        do { try await clock.sleep(for: delay) } catch { return }
      case .park:
        guard let parking = weakRegistry.value?.parking else { return }
        await parking.park()
        // Woken by an activation: the first due is at least `idle` away.
        guard let clock = weakRegistry.value?.clock else { return }
        do { try await clock.sleep(for: idle) } catch { return }
      }
    }
  }

  /// Passivates each entity unused for `idle`; says when to look again.
  func sweepOnce(idleAfter idle: Duration) -> SweepNext {
    let now = self.now()
    let (due, next) = registry.withLock { registry -> ([(ID, Handle)], SweepNext) in
      guard !registry.isShuttingDown else { return ([], .stop) }
      var due: [(ID, Handle)] = []
      while let (id, tick) = registry.recency.first {
        guard let entry = registry.entities[id], entry.tick == tick else {
          registry.recency.removeFirst()
          continue
        }
        let deadline = entry.lastUse + idle
        if deadline > now { return (due, .sleep(deadline - now)) }
        registry.recency.removeFirst()
        if let handle = registry.beginPassivation(id) {
          due.append((id, handle))
        } else {
          // In use, or in a transition: idle from now, if it stays so.
          registry.touch(id, at: now)
        }
      }
      return (due, registry.resident == 0 ? .park : .sleep(idle))
    }
    for (id, handle) in due { startPassivation(of: id, handle) }
    return next
  }

  // MARK: - Shutdown

  /// Stops the registry: refuses new actions, reduces every action it
  /// accepted, then passivates every entity (stores its state and shuts
  /// its core down) and closes the store.
  ///
  /// ```swift
  /// await carts.shutdown()
  /// carts.send(.add("tea"), to: "ada")   // .shutDown
  /// ```
  ///
  /// Effects run to their end first; `for await` observers' streams end
  /// after their final value. Callers already waiting for an entity are
  /// served. Any number of calls may overlap; each returns once the store
  /// is closed. In memory, each entity's core shuts down gracefully.
  public func shutdown() async {
    let task = registry.withLock { registry -> Task<Void, Never> in
      if let task = registry.shutdownTask { return task }
      registry.isShuttingDown = true
      let task = Task { await self.runShutdown() }
      registry.shutdownTask = task
      return task
    }
    await task.value
  }

  private func runShutdown() async {
    for timer in timers.withLock({ $0 }) { timer.cancel() }
    parking.wake()
    while true {
      let (batch, generation, isEmpty) = registry.withLock { registry -> ([(ID, Handle)], Int, Bool) in
        var batch: [(ID, Handle)] = []
        for id in registry.entities.keys {
          if let handle = registry.beginPassivation(id, force: true) { batch.append((id, handle)) }
        }
        return (batch, registry.generation, registry.entities.isEmpty)
      }
      if isEmpty { break }
      if batch.isEmpty {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
          let resumeNow = registry.withLock { registry -> Bool in
            guard registry.generation == generation else { return true }
            registry.changeWaiters.append(continuation)
            return false
          }
          if resumeNow { continuation.resume() }
        }
        continue
      }
      // A bounded number at once, so their snapshots share commits
      // without a task per entity.
      await withTaskGroup(of: Void.self) { group in
        var iterator = batch.makeIterator()
        for _ in 0..<64 {
          guard let (id, handle) = iterator.next() else { break }
          group.addTask { await self.passivate(id, handle, force: true) }
        }
        while await group.next() != nil {
          guard let (id, handle) = iterator.next() else { continue }
          group.addTask { await self.passivate(id, handle, force: true) }
        }
      }
    }
    if let store {
      if store.syncInterval != nil { await syncStore() }
      await store.close()
    }
    // Closed under the lock that clears the sinks: no sink is added after.
    let (sinks, waiters) = registry.withLock { registry in
      defer { registry.eventSinks = [:] }
      return (Array(registry.eventSinks.values), registry.closed.finish())
    }
    for sink in sinks { sink.finish() }
    for waiter in waiters { waiter.resume(returning: true) }
  }
}

extension Entities: FinishSignalOwner {
  func withFinishSignal<Result>(_ body: (inout FinishSignal) -> Result) -> Result {
    registry.withLock { body(&$0.closed) }
  }
}

/// The registry, held weakly by its own timers.
final class WeakEntities<ID: Hashable & Sendable, State: Sendable, Action: Sendable>: Sendable {
  weak let value: Entities<ID, State, Action>?

  init(_ value: Entities<ID, State, Action>) {
    self.value = value
  }
}

/// Where the idle sweeper waits while no entity is resident, apart from
/// the registry so that waiting does not keep the registry alive. A wake
/// with nobody parked is kept for the next park.
final class SweeperParking: Sendable {
  private struct State {
    var parked: CheckedContinuation<Void, Never>?
    var woken = false
  }

  private let state = Locked(State())

  func park() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let resumeNow = state.withLock { state -> Bool in
        if state.woken {
          state.woken = false
          return true
        }
        state.parked = continuation
        return false
      }
      if resumeNow { continuation.resume() }
    }
  }

  func wake() {
    let parked = state.withLock { state -> CheckedContinuation<Void, Never>? in
      guard let parked = state.parked else {
        state.woken = true
        return nil
      }
      state.parked = nil
      return parked
    }
    parked?.resume()
  }
}
