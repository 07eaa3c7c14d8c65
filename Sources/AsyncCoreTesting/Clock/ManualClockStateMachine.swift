import AsyncCore

/// A manual clock's time, its sleepers, and the tasks waiting on it, keyed
/// by id. Pure: `ManualClock` runs it under a lock and resumes the
/// continuations it returns after releasing the lock. The continuation
/// types are parameters so its tests can use labels, with no task.
struct ManualClockStateMachine<Sleep: Sendable, Quiet: Sendable, Answer: Sendable> {
  /// What an advance waits for after waking a sleeper, until it is quiet.
  enum Follow: Hashable {
    /// A task inside a core's effect (the job, by identity): quiet once the
    /// effect sleeps on the clock again or finishes.
    case effect(ObjectIdentifier)
    /// Any other task (its sleep, by id): quiet once that sleep returned.
    case sleep(Int)
  }

  struct Sleeper {
    let id: Int
    let deadline: Duration
    /// The effect the sleeping task runs in, if any.
    let owner: (any ObservedEffect)?
    /// Its effect's start order; for a task outside any effect, taken at `sleep`.
    let startOrder: EffectObservation.StartOrder
    let continuation: Sleep
    /// The clock's time when it began sleeping: set by the machine.
    var sleptAt: Duration = .zero

    var follow: Follow { owner.map { .effect(ObjectIdentifier($0)) } ?? .sleep(id) }

    var rank: Rank { Rank(deadline: deadline, sleptAt: sleptAt, startOrder: startOrder, id: id) }
  }

  /// The order in which sleepers wake: deadline, then the clock's time when
  /// the sleep began, then the effect's start order, then the `sleep` call.
  /// Start order, not call order, breaks ties at one instant: which task
  /// reaches `sleep` first is a race, while a core numbers effects as it reduces.
  struct Rank: Comparable {
    let deadline: Duration
    let sleptAt: Duration
    let startOrder: EffectObservation.StartOrder
    let id: Int

    static func < (lhs: Rank, rhs: Rank) -> Bool {
      (lhs.deadline, lhs.sleptAt, lhs.startOrder, lhs.id) < (rhs.deadline, rhs.sleptAt, rhs.startOrder, rhs.id)
    }
  }

  private struct Follower {
    let follow: Follow
    var isQuiet = false
    var continuation: Quiet?
  }

  private struct CountWaiter {
    let count: Int
    /// Resumed with `true` once the count is reached, `false` if cancelled.
    let continuation: Answer
  }

  /// Time since the clock's zero.
  private(set) var now: Duration = .zero
  private var nextID = 0
  private var sleepers: [Int: Sleeper] = [:]
  private var followers: [Int: Follower] = [:]
  private var countWaiters: [Int: CountWaiter] = [:]
  /// The effects whose end the clock has asked to hear about: one request
  /// per effect, however often it wakes.
  private var watched: Set<ObjectIdentifier> = []
  /// Whether an advance (or run) is moving time; others wait their turn.
  private var isAdvancing = false
  /// Advances waiting for their turn, in the order they were called.
  private var queuedAdvances: [(id: Int, continuation: Answer)] = []

  var sleeperCount: Int { sleepers.count }

  mutating func makeID() -> Int {
    nextID += 1
    return nextID
  }

  // MARK: Sleeping

  /// Waiters to resume after the lock: advances whose follower is quiet,
  /// and waits for a count of sleepers that is reached (with `true`).
  struct WakeUps {
    var followers: [Quiet] = []
    var counts: [Answer] = []
  }

  enum SleepAction {
    /// Not parked: resume the sleeper with this at once.
    case resume(Result<Void, any Error>)
    /// Parked; resume these waiters.
    case parked(WakeUps)
  }

  mutating func sleep(_ sleeper: Sleeper, isCancelled: Bool) -> SleepAction {
    if isCancelled { return .resume(.failure(CancellationError())) }
    if sleeper.deadline <= now { return .resume(.success(())) }
    var sleeper = sleeper
    sleeper.sleptAt = now
    sleepers[sleeper.id] = sleeper
    var wakeUps = WakeUps(counts: reachedCounts())
    if let owner = sleeper.owner { wakeUps.followers = quiet(.effect(ObjectIdentifier(owner))) }
    return .parked(wakeUps)
  }

  /// Removes a cancelled sleeper; its continuation, to resume with
  /// `CancellationError`, if it was still asleep.
  mutating func cancelSleep(_ id: Int) -> Sleep? {
    sleepers.removeValue(forKey: id)?.continuation
  }

  /// A task outside any effect returned from sleep `id`.
  mutating func sleepReturned(_ id: Int) -> [Quiet] {
    quiet(.sleep(id))
  }

  /// Effect `owner`, which a follower may wait for, has finished.
  mutating func effectEnded(_ owner: ObjectIdentifier) -> [Quiet] {
    watched.remove(owner)
    return quiet(.effect(owner))
  }

  // MARK: Advancing

  enum WakeAction {
    /// Resume `sleeper`; with `follower`, then wait for it to be quiet,
    /// first asking its effect's registry to report its end if `watch`.
    case wake(Sleeper, follower: Int?, watch: Bool)
    /// No sleeper is due: time is at the target.
    case done
  }

  /// Takes the sleeper due first at or before `target` (any sleeper when
  /// `nil`), moving time to its deadline; time never goes back. With none,
  /// moves time to `target`. `following` registers a follower for it.
  mutating func wakeNext(until target: Duration?, following: Bool) -> WakeAction {
    let next = sleepers.values.min { $0.rank < $1.rank }
    guard let next, target.map({ next.deadline <= $0 }) ?? true else {
      if let target, target > now { now = target }
      return .done
    }
    sleepers[next.id] = nil
    if next.deadline > now { now = next.deadline }
    guard following else { return .wake(next, follower: nil, watch: false) }
    let id = makeID()
    followers[id] = Follower(follow: next.follow)
    let watch = next.owner.map { watched.insert(ObjectIdentifier($0)).inserted } ?? false
    return .wake(next, follower: id, watch: watch)
  }

  /// Parks an advance until its follower is quiet; `false` if it already
  /// is, or was cancelled (removed): go on at once.
  mutating func parkFollower(_ id: Int, _ continuation: Quiet) -> Bool {
    guard let follower = followers[id], !follower.isQuiet else {
      followers[id] = nil
      return false
    }
    followers[id]?.continuation = continuation
    return true
  }

  /// Removes follower `id` (its advance was cancelled); its continuation,
  /// if it was parked.
  mutating func removeFollower(_ id: Int) -> Quiet? {
    followers.removeValue(forKey: id)?.continuation
  }

  private mutating func quiet(_ follow: Follow) -> [Quiet] {
    guard !followers.isEmpty else { return [] }
    var ready: [Quiet] = []
    for (id, follower) in followers where follower.follow == follow && !follower.isQuiet {
      if let continuation = follower.continuation {
        followers[id] = nil
        ready.append(continuation)
      } else {
        followers[id]?.isQuiet = true
      }
    }
    return ready
  }

  // MARK: Taking turns

  /// An advance begins: `true` if it may move time now; `false` if another
  /// has the turn and this task is cancelled (it goes on without one); `nil`
  /// if queued.
  mutating func beginAdvance(_ id: Int, _ continuation: Answer, isCancelled: Bool) -> Bool? {
    guard isAdvancing else {
      isAdvancing = true
      return true
    }
    if isCancelled { return false }
    queuedAdvances.append((id, continuation))
    return nil
  }

  /// An advance waiting for its turn was cancelled: it leaves the queue.
  /// Its continuation, if still queued.
  mutating func leaveAdvanceQueue(_ id: Int) -> Answer? {
    guard let index = queuedAdvances.firstIndex(where: { $0.id == id }) else { return nil }
    return queuedAdvances.remove(at: index).continuation
  }

  /// The advance with the turn is done: the next queued one, to resume
  /// with `true`, takes it.
  mutating func endAdvance() -> Answer? {
    guard !queuedAdvances.isEmpty else {
      isAdvancing = false
      return nil
    }
    return queuedAdvances.removeFirst().continuation
  }

  // MARK: Counting sleepers

  /// Parks a wait for `count` sleepers, or answers at once: `true` if they
  /// are there already, `false` if the waiting task was cancelled.
  mutating func parkCountWaiter(_ id: Int, count: Int, _ continuation: Answer, isCancelled: Bool) -> Bool? {
    if sleepers.count >= count { return true }
    if isCancelled { return false }
    countWaiters[id] = CountWaiter(count: count, continuation: continuation)
    return nil
  }

  mutating func removeCountWaiter(_ id: Int) -> Answer? {
    countWaiters.removeValue(forKey: id)?.continuation
  }

  private mutating func reachedCounts() -> [Answer] {
    guard !countWaiters.isEmpty else { return [] }
    var ready: [Answer] = []
    for (id, waiter) in countWaiters where waiter.count <= sleepers.count {
      countWaiters[id] = nil
      ready.append(waiter.continuation)
    }
    return ready
  }
}
