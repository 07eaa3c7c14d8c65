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
package struct EntityLifecycle<Handle, Action> {
  package enum Phase {
    case passive
    case activating
    case active(Handle)
    case passivating(Handle)
  }

  package private(set) var phase: Phase = .passive
  package private(set) var pending: [Action] = []
  package private(set) var waiters: [Int] = []
  /// Callers holding the active entity: a dispatch, a read, a `withCore`.
  package private(set) var users = 0

  package init() {}

  /// Whether the registry may forget this entity: passive, with nothing waiting.
  package var isForgettable: Bool {
    if case .passive = phase { return pending.isEmpty && waiters.isEmpty && users == 0 }
    return false
  }

  package var isActive: Bool {
    if case .active = phase { return true }
    return false
  }

  // MARK: - Arrivals

  package enum SendAction {
    /// Hand the action to the core now, before the registry's lock is released.
    case deliver(Handle)
    /// Queued; the entity is passive and its activation must be started.
    case activate
    /// Queued behind an activation or a passivation in progress.
    case queued
  }

  /// An action sent to the entity.
  package mutating func send(_ action: Action) -> SendAction {
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
  package mutating func use(waiter id: Int) -> UseAction {
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

  /// A user is done with the entity.
  package mutating func release() {
    guard users > 0 else { programmerError("EntityLifecycle.release: the entity has no user") }
    users -= 1
  }

  // MARK: - Activation

  /// What waited for the entity, now to be handed to its core: the pending
  /// actions first, in order, then the waiters resumed (each now a user).
  package struct Released {
    package var pending: [Action]
    package var waiters: [Int]
  }

  /// The activation finished with the entity's core.
  package mutating func activated(_ handle: Handle) -> Released {
    guard case .activating = phase else {
      programmerError("EntityLifecycle.activated: the entity is not activating (\(phase))")
    }
    phase = .active(handle)
    return releaseWaiting()
  }

  /// A passive entity activated at once, with nothing to read (a
  /// registry in memory): active, with nothing waiting.
  package mutating func activatedAtOnce(_ handle: Handle) {
    guard case .passive = phase, pending.isEmpty, waiters.isEmpty else {
      programmerError("EntityLifecycle.activatedAtOnce: the entity is not passive with nothing waiting (\(phase))")
    }
    phase = .active(handle)
  }

  /// The activation failed: what waited is refused, and the entity is
  /// passive again (a later use tries again).
  package mutating func activationFailed() -> Released {
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
  package mutating func beginPassivation(isIdle: Bool, ignoringUsers: Bool = false) -> Handle? {
    guard case .active(let handle) = phase, users == 0 || ignoringUsers, isIdle else { return nil }
    phase = .passivating(handle)
    return handle
  }

  package enum AfterPassivation {
    /// Nobody waits: the registry forgets the entity.
    case forget
    /// Something arrived meanwhile: activate again, from what was stored.
    case activate
  }

  /// The passivation stored the state and shut the core down.
  package mutating func passivated() -> AfterPassivation {
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
  package mutating func passivationRefused() -> Released {
    guard case .passivating(let handle) = phase else {
      programmerError("EntityLifecycle.passivationRefused: the entity is not passivating (\(phase))")
    }
    phase = .active(handle)
    return releaseWaiting()
  }

  private mutating func releaseWaiting() -> Released {
    let released = Released(pending: pending, waiters: waiters)
    users += waiters.count
    pending = []
    waiters = []
    return released
  }
}
