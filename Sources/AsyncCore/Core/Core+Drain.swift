import Synchronization

// The drain: the task `send` starts, which reduces the queue a slice at a
// time (see DrainStateMachine.swift for its decisions). Reducing itself is
// in Core+Dispatch.swift.
extension Core {
  /// Runs on the drain task started by `send`: reduces what the mailbox holds,
  /// batch by batch, publishing once per batch and yielding the core after
  /// each slice (`drainSlice` actions), until it is empty. What to
  /// do at each turn is `drainMachine`'s decision; this loop carries it out.
  @inlinable
  func drain() async {
    if journal != nil { return await journaledDrain() }
    while true {
      let step: DrainStateMachine.Step
      if let count = reduceSlice(max: drainMachine.takeLimit) {
        sliceCount.store(sliceCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        publishBatch()
        step = drainMachine.reduced(count: count)
      } else {
        step = drainMachine.foundEmpty()
      }
      switch step {
      case .takeNext:
        continue
      case .yield:
        await Task.yield()
      case .publishThenYield:
        publishDue()
        await Task.yield()
      case .pause(let publishingFirst):
        if publishingFirst { publishDue() }
        await Self.pause(for: publicationPause)
      case .exit:
        return
      }
    }
  }

  /// Reduces the drain's next slice, at most `max` actions, and returns
  /// how many: from the backlog while it holds any, else all the mailbox
  /// holds, swapped out in O(1) under its lock, of which what exceeds `max`
  /// goes to the backlog for the next slices. `nil` when both are empty
  /// (and then, unless it stays scheduled, the mailbox has marked the drain
  /// finished).
  @inlinable
  func reduceSlice(max: Int) -> Int? {
    if backlog.isEmpty {
      guard
        var batch = mailbox.takeBatch(
          from: &spareBatch, stayingScheduled: drainMachine.staysScheduledWhenEmpty, pendingIfOver: max)
      else { return nil }
      let count = batch.count
      if count <= max {
        reduceQueued(&batch)
        return count
      }
      backlog.adopt(&batch)
      Mailbox.recycle(&batch, into: &spareBatch)
    }
    return reduceBacklog(max: max)
  }

  /// Reduces the oldest actions of the backlog, at most `max` (at least
  /// one), where they are, and lets go of them; returns how many.
  @inlinable
  @discardableResult
  func reduceBacklog(max: Int) -> Int {
    let count = backlog.consumeOldest(max: max) { reduceEnvelopes($0) }
    noteReducedFromQueue(count)
    return count
  }

  /// Counts `count` actions reduced from the queue and reports them to the
  /// mailbox at once: the queue's depth is exact as soon as the core has
  /// reduced them, and senders waiting for room get it as soon as it exists.
  /// One lock per batch or slice, not per action.
  /// The most actions the drain reduces before it lets the core's other
  /// callers in: a slice. With a trivial reducer a slice holds the core for
  /// tens of microseconds; with a reducer that takes a microsecond, for
  /// about 16 ms.
  ///
  /// The trade-off, measured (8 producers flooding `send`, each yielding
  /// every 1,000 sends, release, 2 cores): a yield puts the drain behind
  /// every task waiting for a thread, so a slice must outlast what the
  /// producers send in one round of the pool, or the drain falls behind and
  /// the queue grows. At 4,096, `await core.state` took 2.5 ms at the median
  /// (0.5 ms before slices) and throughput fell by a fifth; at 16,384 and
  /// above both were as before. A slice does not shorten what a caller of
  /// `dispatch` or `state` reduces itself: everything queued at its call.
  @inlinable
  static var drainSlice: Int { 16_384 }

  /// How long the drain steps off the core while dispatches keep coming:
  /// longer with more registrations, as each publication may wake each of
  /// them, so their wake-ups stay a bounded share of the core's time; never
  /// over half a millisecond, which bounds how stale a latest-value
  /// observer's value can be, and how long an action sent meanwhile can
  /// wait when no dispatch comes to reduce it first.
  @inlinable
  var publicationPause: Duration { .microseconds(min(500, 20 + 4 * observers.registeredCount)) }

  /// Waits `duration` off the core, which stays free for dispatches.
  @usableFromInline
  nonisolated static func pause(for duration: Duration) async {
    try? await Task.sleep(for: duration)
  }
}

// MARK: - For the package's benchmarks

extension Core {
  /// Sets the drain's slice (``drainSlice`` by default), so the benchmarks
  /// can measure the fair drain against a drain that never yields
  /// (`Int.max`), in the same run. Call before the first action. Not API:
  /// `package`, for the Benchmarks target.
  package func setDrainSliceForBenchmarks(_ slice: Int) {
    drainMachine = DrainStateMachine(slice: slice)
  }
}
