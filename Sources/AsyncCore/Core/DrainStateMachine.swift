/// Decides, turn by turn, what the core's drain task does: take the next
/// slice of the mailbox, publish the state dispatches left, let the core's
/// other callers run, step off the core for a pause, or end. Pure: no
/// clock, no task, no lock; the core keeps it in its isolation and `drain()`
/// carries out the steps it returns (see Core+Dispatch.swift).
///
/// It also holds the publication window that `dispatch` shares with the
/// drain: the first `dispatch` after a quiet spell publishes to latest-value
/// observers at once and opens the window; while it is open, dispatches
/// leave their publication to the drain, which publishes once for many of
/// them and closes the window at its first look that finds none.
@usableFromInline
struct DrainStateMachine {
  /// What `dispatch` does with its latest-value publication.
  @usableFromInline
  enum AfterDispatch: Equatable {
    /// Publish now, and make sure a drain is on its way to close the
    /// window it opened.
    case publishAndScheduleDrain
    /// Leave it to the drain: it is due, and the drain publishes it.
    case leaveToDrain
  }

  /// What the drain task does next.
  @usableFromInline
  enum Step: Equatable {
    /// Take the next slice at once.
    case takeNext
    /// Let the core's other callers run (`Task.yield()`), then take.
    case yield
    /// Publish the state dispatches left to latest-value observers, then
    /// yield.
    case publishThenYield
    /// Step off the core for the publication pause (publishing first what
    /// is due, if `publishingFirst`), then take.
    case pause(publishingFirst: Bool)
    /// The drain is over: the mailbox has already marked it finished.
    case exit
  }

  /// The most actions the drain reduces between two yields: a slice.
  @usableFromInline let slice: Int

  // The publication window, shared with `dispatch`.
  /// Whether a `dispatch` published to latest-value observers and the drain
  /// has not yet seen a look without a dispatch since.
  @usableFromInline var isPublicationWindowOpen = false
  /// Whether latest-value observers have not been published the current
  /// state yet: set by a `dispatch` inside the window, cleared by every
  /// publication to them.
  @usableFromInline var isPublicationDue = false
  /// Whether a `dispatch` ran since the drain last looked.
  @usableFromInline var hasDispatchedSinceLook = false

  // The current drain task's turn; back to zero when it ends.
  /// Actions reduced since the drain last yielded (for any reason).
  @usableFromInline var reducedSinceYield: Int32 = 0
  /// Looks in a row that found new dispatches.
  @usableFromInline var busyLooks: Int32 = 0
  /// Whether the drain found the mailbox empty once and yielded, to
  /// linger: the next empty look ends it.
  @usableFromInline var hasLingered = false

  /// A batch smaller than this means the drain keeps pace with a producer
  /// and the two contend for the mailbox's lock on every action; yielding
  /// once lets the next batch grow, so the lock is taken far less often.
  @inlinable
  static var smallBatch: Int { 64 }

  /// How many looks in a row on the core find new dispatches before the
  /// drain pauses off the core: a few, so that a dispatcher awaiting its
  /// observers (one dispatch, then the next only after they woke) finds the
  /// window closed and publishes at once.
  @inlinable
  static var looksBeforePausing: Int32 { 4 }

  /// The default slice: see `Core.drainSlice`.
  @inlinable
  init(slice: Int) {
    self.slice = max(1, min(slice, Int(Int32.max)))
  }

  /// Whether the drain stays scheduled when its next look finds the mailbox
  /// empty: until it has lingered once, and while the window is open.
  @inlinable
  var staysScheduledWhenEmpty: Bool { !hasLingered || isPublicationWindowOpen }

  /// The most actions the drain's next take may hold: what is left of the
  /// slice since the last yield.
  @inlinable
  var takeLimit: Int { slice - Int(reducedSinceYield) }

  /// A `dispatch` with latest-value observers has reduced.
  @inlinable
  mutating func dispatched() -> AfterDispatch {
    if isPublicationWindowOpen {
      isPublicationDue = true
      hasDispatchedSinceLook = true
      return .leaveToDrain
    }
    // Never refused: the drain runs whatever the lifecycle's phase.
    isPublicationWindowOpen = true
    hasDispatchedSinceLook = false
    return .publishAndScheduleDrain
  }

  /// Latest-value observers were just published the current state.
  @inlinable
  mutating func published() {
    isPublicationDue = false
  }

  /// The drain took `count` actions (at most `takeLimit`) and reduced and
  /// published them.
  @inlinable
  mutating func reduced(count: Int) -> Step {
    hasLingered = false
    reducedSinceYield += Int32(clamping: count)
    if count < Self.smallBatch || Int(reducedSinceYield) >= slice {
      reducedSinceYield = 0
      return .yield
    }
    return .takeNext
  }

  /// The drain's take found the mailbox empty (and, unless
  /// `staysScheduledWhenEmpty` was true, the mailbox marked it finished).
  /// Every step it returns but `.takeNext` lets the core's other callers in,
  /// so the next take starts a new slice.
  @inlinable
  mutating func foundEmpty() -> Step {
    let step = lookedAtEmpty()
    if step != .takeNext { reducedSinceYield = 0 }
    return step
  }

  /// The step for an empty look, before `foundEmpty` resets the slice.
  @inlinable
  mutating func lookedAtEmpty() -> Step {
    if isPublicationWindowOpen {
      // Dispatches are publishing through this drain. While they keep
      // coming, let them run: for a few turns on the core, then, if they
      // still come, stepping off the core for a pause between looks (a
      // drain waiting on the core would cost every dispatch its fast hop),
      // publishing what they left at most once a pause. Close the window
      // at the first look that finds none.
      if hasDispatchedSinceLook {
        hasDispatchedSinceLook = false
        if busyLooks < Self.looksBeforePausing {
          busyLooks += 1
          return .yield
        }
        return .pause(publishingFirst: isPublicationDue)
      }
      busyLooks = 0
      if isPublicationDue { return .publishThenYield }
      isPublicationWindowOpen = false
      hasLingered = true
      return .takeNext
    }
    if hasLingered {
      // The take marked the drain finished; the next drain starts afresh.
      hasLingered = false
      busyLooks = 0
      return .exit
    }
    // Before going idle, linger once: a producer sending in a loop then
    // finds this drain still on its way instead of starting a task per
    // batch, which costs it more than the sends themselves.
    hasLingered = true
    return .yield
  }
}
