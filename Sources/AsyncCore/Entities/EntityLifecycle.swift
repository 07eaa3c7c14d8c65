/// The lifecycle of one entity, with no storage and no task of its own:
/// each method returns what the registry must do. `Handle` is the
/// entity's core (any type, so the tests drive it with plain values).
///
///     passive ──use/send──▶ activating ──activated──▶ active
///        ▲                      │ failed                │ begin passivation (idle, no user)
///        │◀─────────────────────┘                       ▼
///        └───────── passivated, nobody waiting ──── passivating
///                   (someone waiting: activating again; refused: active)
///
/// What arrives while the entity is not active waits here, in order:
/// `pending` actions, and `waiters`, the ids of callers to resume once
/// it is. A caller the registry resumes with the handle is a user until
/// it calls ``release()``; an entity with a user is not passivated.
@usableFromInline
package struct EntityLifecycle<Handle, Action> {
  @usableFromInline
  package enum Phase {
    case passive
    case activating
    case active(Handle)
    case passivating(Handle)
  }

  @usableFromInline package var phase: Phase = .passive
  @usableFromInline package var pending: [Action] = []
  @usableFromInline package var waiters: [Int] = []
  /// Callers holding the active entity: a dispatch, a read, a `withCore`.
  @usableFromInline package var users = 0

  @inlinable package init() {}

  /// Whether the registry may forget this entity: passive, with nothing waiting.
  @inlinable package var isForgettable: Bool {
    if case .passive = phase { return pending.isEmpty && waiters.isEmpty && users == 0 }
    return false
  }

  @inlinable package var isActive: Bool {
    if case .active = phase { return true }
    return false
  }

  // MARK: - Arrivals

  @usableFromInline
  package enum SendAction {
    /// Hand the action to the core now, before the registry's lock is released.
    case deliver(Handle)
    /// Queued; the entity is passive and its activation must be started.
    case activate
    /// Queued behind an activation or a passivation in progress.
    case queued
  }

  /// An action sent to the entity.
  @inlinable package mutating func send(_ action: Action) -> SendAction {
    switch phase {
    case .active(let handle):
      return .deliver(handle)
    case .passive:
      pending.append(action)
      phase = .activating
      return .activate
    case .activating, .passivating:
      pending.append(action)
      return .queued
    }
  }

  @usableFromInline
  package enum UseAction {
    /// The caller is a user now: go on with the handle.
    case proceed(Handle)
    /// The caller waits with its id; the entity is passive and its
    /// activation must be started.
    case activateAndWait
    /// The caller waits with its id, behind a transition in progress.
    case wait
  }

  /// A caller that needs the entity active (`dispatch`, `state`, `observe`).
  @inlinable package mutating func use(waiter id: Int) -> UseAction {
    switch phase {
    case .active(let handle):
      users += 1
      return .proceed(handle)
    case .passive:
      waiters.append(id)
      phase = .activating
      return .activateAndWait
    case .activating, .passivating:
      waiters.append(id)
      return .wait
    }
  }

  /// A waiting caller left (its task was cancelled); `false` if it is not
  /// waiting (already resumed).
  @inlinable package mutating func cancelWaiter(_ id: Int) -> Bool {
    guard let index = waiters.firstIndex(of: id) else { return false }
    waiters.remove(at: index)
    return true
  }

  /// A user is done with the entity.
  @inlinable package mutating func release() {
    guard users > 0 else { programmerError("EntityLifecycle.release: the entity has no user") }
    users -= 1
  }

  // MARK: - Activation

  /// What waited for the entity, now to be handed to its core: the pending
  /// actions first, in order, then the waiters resumed (each now a user).
  @usableFromInline
  package struct Released {
    @usableFromInline package var pending: [Action]
    @usableFromInline package var waiters: [Int]

    @inlinable
    package init(pending: [Action], waiters: [Int]) {
      self.pending = pending
      self.waiters = waiters
    }
  }

  /// The activation finished with the entity's core.
  @inlinable package mutating func activated(_ handle: Handle) -> Released {
    guard case .activating = phase else {
      programmerError("EntityLifecycle.activated: the entity is not activating (\(phase))")
    }
    phase = .active(handle)
    return releaseWaiting()
  }

  /// A passive entity activated at once, with nothing to read (a
  /// registry in memory): active, with nothing waiting.
  @inlinable package mutating func activatedAtOnce(_ handle: Handle) {
    guard case .passive = phase, pending.isEmpty, waiters.isEmpty else {
      programmerError("EntityLifecycle.activatedAtOnce: the entity is not passive with nothing waiting (\(phase))")
    }
    phase = .active(handle)
  }

  /// The activation failed: what waited is refused, and the entity is
  /// passive again (a later use tries again).
  @inlinable package mutating func activationFailed() -> Released {
    guard case .activating = phase else {
      programmerError("EntityLifecycle.activationFailed: the entity is not activating (\(phase))")
    }
    phase = .passive
    let refused = Released(pending: pending, waiters: waiters)
    pending = []
    waiters = []
    return refused
  }

  // MARK: - Passivation

  /// Starts a passivation if the entity is active with no user and the
  /// registry found it idle (no effect in flight, no observer): returns
  /// the handle to passivate, or `nil` to leave it active.
  /// With `ignoringUsers`, for a core that has stopped by itself (its
  /// journal failed): its users' calls fail on it, and what comes next
  /// waits for a new activation.
  @inlinable package mutating func beginPassivation(isIdle: Bool, ignoringUsers: Bool = false) -> Handle? {
    guard case .active(let handle) = phase, users == 0 || ignoringUsers, isIdle else { return nil }
    phase = .passivating(handle)
    return handle
  }

  @usableFromInline
  package enum AfterPassivation {
    /// Nobody waits: the registry forgets the entity.
    case forget
    /// Something arrived meanwhile: activate again, from what was stored.
    case activate
  }

  /// The passivation stored the state and shut the core down.
  @inlinable package mutating func passivated() -> AfterPassivation {
    guard case .passivating = phase else {
      programmerError("EntityLifecycle.passivated: the entity is not passivating (\(phase))")
    }
    if pending.isEmpty && waiters.isEmpty {
      phase = .passive
      return .forget
    }
    phase = .activating
    return .activate
  }

  /// The passivation did not happen (the core became busy, or the store
  /// failed): the entity stays active with the same core, and what waited
  /// is handed to it.
  @inlinable package mutating func passivationRefused() -> Released {
    guard case .passivating(let handle) = phase else {
      programmerError("EntityLifecycle.passivationRefused: the entity is not passivating (\(phase))")
    }
    phase = .active(handle)
    return releaseWaiting()
  }

  @inlinable mutating func releaseWaiting() -> Released {
    let released = Released(pending: pending, waiters: waiters)
    users += waiters.count
    pending = []
    waiters = []
    return released
  }
}
