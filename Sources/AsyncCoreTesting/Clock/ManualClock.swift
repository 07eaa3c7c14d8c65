import AsyncCore

/// A clock whose time moves only when you advance it: a 60-second timer is
/// tested, or simulated, in microseconds and the same way on every run.
///
/// ```swift
/// import AsyncCoreTesting
///
/// let clock = ManualClock()
/// let core = Core<Countdown, CountdownAction>(initialState: Countdown(seconds: 60), clock: clock) { state, action in
///   switch action {
///   case .start:
///     return .run { send in
///       for _ in 0..<60 {
///         try await send.clock.sleep(for: .seconds(1))
///         await send(.tick)
///       }
///     }
///   case .tick:
///     state.seconds -= 1
///     return .none
///   }
/// }
/// try await core.dispatch(.start)
/// try await clock.waitForSleepers(atLeast: 1)   // the countdown is asleep
/// await clock.advance(by: .seconds(10))         // ten ticks sent, one at a time
/// #expect(await core.state.seconds == 50)
/// ```
///
/// It lives in AsyncCoreTesting, beside ``TestCore``, so an app links
/// AsyncCore alone; a core pays nothing for it while no effect is followed.
///
/// A sleep ends when time reaches or passes its deadline, never earlier,
/// and cancelling the sleeping task ends it at once with
/// `CancellationError`. ``advance(by:)`` wakes sleepers one at a time, in
/// deadline order, and lets each woken one run before the next wakes.
///
/// - Important: Equal deadlines wake in the order the sleeps began, on this
///   clock's time, and sleeps that began at one instant in the order their
///   effects were started: two effects a test starts one after the other
///   wake and send in that order on every run, whichever task reached its
///   `sleep` first.
///
/// - Important: Safe to use from any task; time never goes back.
public final class ManualClock: Clock, Sendable {
  /// A point in a manual clock's time: a duration since the clock's zero.
  ///
  /// ```swift
  /// let clock = ManualClock()
  /// let start = clock.now                  // .zero
  /// await clock.advance(by: .seconds(5))
  /// #expect(start.duration(to: clock.now) == .seconds(5))
  /// ```
  public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
    /// The time since the clock's zero.
    ///
    /// ```swift
    /// await clock.advance(by: .seconds(5))
    /// #expect(clock.now.offset == .seconds(5))
    /// ```
    public let offset: Duration

    /// The instant `offset` after the clock's zero.
    ///
    /// ```swift
    /// await clock.advance(to: ManualClock.Instant(offset: .seconds(30)))
    /// ```
    public init(offset: Duration) {
      self.offset = offset
    }

    /// The clock's zero, where every manual clock starts.
    ///
    /// ```swift
    /// #expect(ManualClock().now == .zero)
    /// ```
    public static var zero: Instant { Instant(offset: .zero) }

    /// This instant moved by `duration`.
    ///
    /// ```swift
    /// let deadline = clock.now.advanced(by: .seconds(1))
    /// ```
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// The time from this instant to `other`.
    ///
    /// ```swift
    /// #expect(ManualClock.Instant.zero.duration(to: clock.now) == .seconds(5))
    /// ```
    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    /// Whether `lhs` comes before `rhs`.
    ///
    /// ```swift
    /// #expect(ManualClock.Instant.zero < clock.now.advanced(by: .seconds(1)))
    /// ```
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }

    /// The offset, as `Duration` prints it: "5.0 seconds".
    ///
    /// ```swift
    /// print(clock.now)   // 5.0 seconds
    /// ```
    public var description: String { offset.description }
  }

  /// The clock's state machine, with checked continuations.
  typealias Machine = ManualClockStateMachine<
    CheckedContinuation<Void, any Error>, CheckedContinuation<Void, Never>, CheckedContinuation<Bool, Never>
  >

  private let state = Locked(Machine())

  /// A clock at ``Instant/zero`` with nobody asleep.
  ///
  /// ```swift
  /// let core = Core<Timer, TimerAction>(initialState: Timer(), clock: ManualClock(), reducer: reduceTimer)
  /// ```
  public init() {}

  /// The current time: moved only by ``advance(by:)``, ``advance(to:)`` and
  /// ``run()``.
  ///
  /// ```swift
  /// await clock.advance(by: .seconds(2))
  /// #expect(clock.now == .zero.advanced(by: .seconds(2)))
  /// ```
  ///
  /// While an advance lets a woken task run, `now` is that task's deadline
  /// (the time it woke at), not yet the advance's target.
  public var now: Instant {
    Instant(offset: state.withLock { $0.now })
  }

  /// Zero: any deadline, however close, is honoured exactly.
  ///
  /// ```swift
  /// #expect(clock.minimumResolution == .zero)
  /// ```
  public var minimumResolution: Duration { .zero }

  /// How many tasks are asleep on this clock now.
  ///
  /// ```swift
  /// core.send(.stopTimer)
  /// try await core.waitUntilIdle()
  /// #expect(clock.sleeperCount == 0)
  /// ```
  public var sleeperCount: Int {
    state.withLock { $0.sleeperCount }
  }

  /// Suspends the calling task until the clock reaches `deadline`.
  ///
  /// ```swift
  /// try await clock.sleep(until: clock.now.advanced(by: .seconds(1)))
  /// // usually through Clock's sleep(for:): try await send.clock.sleep(for: .seconds(1))
  /// ```
  ///
  /// Returns at once if the clock is already at or past `deadline`.
  /// `tolerance` is ignored: the sleep ends exactly when time reaches its
  /// deadline.
  ///
  /// - Throws: `CancellationError` if the task is cancelled, before or
  ///   while it sleeps: a cancelled sleeper wakes at once and no longer
  ///   counts as asleep.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    // The effect the calling task runs in, if any: an advance that wakes
    // this task follows that effect until it sleeps again or finishes.
    let owner = EffectObservation.current
    let startOrder = owner?.startOrder ?? EffectObservation.nextStartOrder()
    let id = state.withLock { $0.makeID() }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let sleeper = Machine.Sleeper(
          id: id, deadline: deadline.offset, owner: owner, startOrder: startOrder, continuation: continuation)
        // Cancellation is read under the lock `onCancel` takes too: it either
        // happened before (refused here) or finds the sleeper parked.
        switch state.withLock({ $0.sleep(sleeper, isCancelled: Task.isCancelled) }) {
        case .resume(let result): continuation.resume(with: result)
        case .parked(let wakeUps): wakeUps.resume()
        }
      }
    } onCancel: {
      state.withLock { $0.cancelSleep(id) }?.resume(throwing: CancellationError())
    }
    // Woken by an advance: a task outside any effect is followed this far.
    if owner == nil {
      for waiter in state.withLock({ $0.sleepReturned(id) }) { waiter.resume() }
    }
  }

  /// Moves time forward by `duration`, waking every sleeper whose deadline
  /// it reaches, and returns once they have run.
  ///
  /// ```swift
  /// try await core.dispatch(.start)               // an effect sleeps 60 s
  /// try await clock.waitForSleepers(atLeast: 1)
  /// await clock.advance(by: .seconds(60))
  /// #expect(await core.state.hasExpired)          // no Task.yield loop
  /// ```
  ///
  /// Sleepers wake one at a time, in deadline order; while one runs,
  /// ``now`` is its deadline. Equal deadlines wake in the order the sleeps
  /// began on this clock's time, then in the order their effects were
  /// started (the order the core reduced the actions that returned them);
  /// a task outside any effect counts as started when it calls `sleep`, and
  /// tasks of one effect wake in the order they called it.
  ///
  /// ```swift
  /// try await core.dispatch(.fetch("a"))   // sleeps 1 s, then sends .fetched("a")
  /// try await core.dispatch(.fetch("b"))   // the same
  /// try await clock.waitForSleepers(atLeast: 2)
  /// await clock.advance(by: .seconds(1))   // .fetched("a") then .fetched("b"), on every run
  /// ```
  ///
  /// After waking one, the advance waits until it is quiet before waking the
  /// next: a task in a core's effect once that effect sleeps on this clock
  /// again or has ended (so an effect that sleeps, sends and ends has sent
  /// before this returns); any other task once its sleep has returned. A
  /// woken task that sleeps again within the target wakes again in the same
  /// advance. Then time moves to the target. A negative `duration` is a
  /// programmer error.
  ///
  /// It cannot see, so a test must not rely on:
  /// - a woken effect awaiting something else (a fake network call not yet
  ///   answered): it keeps the advance waiting;
  /// - actions woken effects sent: queued, not reduced, and the effects they
  ///   start are not followed. A timer re-armed through an action needs one
  ///   advance per period, with ``waitForSleepers(atLeast:)`` in between, as
  ///   does the next part of a `.concatenate`;
  /// - another task of the woken effect waiting on something else: it keeps
  ///   the advance waiting;
  /// - an advance from inside the effect it wakes: it waits for itself.
  ///
  /// Advances called from several tasks at once take turns, in call order,
  /// each starting where the one before left time.
  ///
  /// - Important: If the advancing task is cancelled, the advance stops
  ///   waiting: it wakes every remaining due sleeper at once, in order, moves
  ///   time to the target and returns.
  public func advance(by duration: Duration) async {
    if duration < .zero {
      // `fatalError`, not `precondition`: its message survives `-O`.
      fatalError("AsyncCoreTesting: ManualClock.advance(by:) was given a negative duration, \(duration)")
    }
    await takingTurn { await self.advance(until: self.state.withLock { $0.now } + duration) }
  }

  /// Moves time forward to `deadline`, as ``advance(by:)`` does; does
  /// nothing if the clock is already there or past it.
  ///
  /// ```swift
  /// await clock.advance(to: .zero.advanced(by: .seconds(60)))
  /// ```
  public func advance(to deadline: Instant) async {
    await takingTurn { await self.advance(until: deadline.offset) }
  }

  /// Advances until nobody sleeps on the clock: to each next deadline in
  /// turn, waking sleepers as ``advance(by:)`` does.
  ///
  /// ```swift
  /// try await core.dispatch(.showToast)   // hides itself after 3 s
  /// try await clock.waitForSleepers(atLeast: 1)
  /// await clock.run()
  /// #expect(await core.state.toast == nil)
  /// ```
  ///
  /// Tasks that begin sleeping while it runs (a woken task sleeping again,
  /// an effect started meanwhile) are woken too, when their turn comes: it
  /// returns only once no sleeper is left, with time at the last deadline
  /// it reached. So a timer that always sleeps again keeps it running:
  /// use ``advance(by:)`` for those.
  ///
  /// - Important: If the running task is cancelled, it stops before waking
  ///   the next sleeper and returns.
  public func run() async {
    await takingTurn { await self.advance(until: nil) }
  }

  /// Runs `body` (an advance) once the advances called before it have
  /// returned; a task cancelled while waiting goes on at once.
  private func takingTurn(_ body: () async -> Void) async {
    let id = state.withLock { $0.makeID() }
    let hasTurn = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        // Read under the lock `onCancel` takes too (see `sleep`).
        let answer = state.withLock { $0.beginAdvance(id, continuation, isCancelled: Task.isCancelled) }
        if let answer { continuation.resume(returning: answer) }
      }
    } onCancel: {
      state.withLock { $0.leaveAdvanceQueue(id) }?.resume(returning: false)
    }
    await body()
    if hasTurn { state.withLock { $0.endAdvance() }?.resume(returning: true) }
  }

  /// Waits until at least `count` tasks are asleep on this clock: the
  /// signal to wait for before advancing, instead of yielding and hoping.
  ///
  /// ```swift
  /// try await core.dispatch(.start)
  /// try await clock.waitForSleepers(atLeast: 1)   // the effect has reached its sleep
  /// await clock.advance(by: .seconds(1))
  /// ```
  ///
  /// Returns at once if there are enough already.
  ///
  /// - Throws: `CancellationError` if the waiting task is cancelled first
  ///   (a test's time limit does this): a wait for sleepers that never come
  ///   fails instead of hanging.
  public func waitForSleepers(atLeast count: Int) async throws(CancellationError) {
    let id = state.withLock { $0.makeID() }
    let reached = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        // Read under the lock `onCancel` takes too (see `sleep`).
        let answer = state.withLock {
          $0.parkCountWaiter(id, count: count, continuation, isCancelled: Task.isCancelled)
        }
        if let answer { continuation.resume(returning: answer) }
      }
    } onCancel: {
      state.withLock { $0.removeCountWaiter(id) }?.resume(returning: false)
    }
    if !reached { throw CancellationError() }
  }

  /// Wakes due sleepers one at a time until `target` (every sleeper, when
  /// `nil`), following each until it is quiet while the task is not
  /// cancelled.
  private func advance(until target: Duration?) async {
    while true {
      let following = !Task.isCancelled
      if target == nil && !following { return }
      let action = state.withLock { $0.wakeNext(until: target, following: following) }
      guard case .wake(let sleeper, let follower, let watch) = action else { return }
      if watch, let owner = sleeper.owner {
        // Once per effect: it stays watched until it ends, however often it wakes.
        let ended: @Sendable () -> Void = {
          for waiter in self.state.withLock({ $0.effectEnded(ObjectIdentifier(owner)) }) { waiter.resume() }
        }
        if !owner.observeEnd(ended) { ended() }
      }
      sleeper.continuation.resume()
      if let follower { await waitUntilQuiet(follower) }
    }
  }

  private func waitUntilQuiet(_ follower: Int) async {
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        if !state.withLock({ $0.parkFollower(follower, continuation) }) { continuation.resume() }
      }
    } onCancel: {
      state.withLock { $0.removeFollower(follower) }?.resume()
    }
  }
}

extension ManualClock.Machine.WakeUps
where Quiet == CheckedContinuation<Void, Never>, Answer == CheckedContinuation<Bool, Never> {
  /// Resumes the advances whose follower is quiet, and the waits for a
  /// count of sleepers that is reached.
  func resume() {
    for waiter in followers { waiter.resume() }
    for waiter in counts { waiter.resume(returning: true) }
  }
}
