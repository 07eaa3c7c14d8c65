// Record and replay. A recorder is an entry of the action log's list in
// the core's `ObserverRegistry` (see `ActionSink`): the core hands it each
// action after reducing it, in the same synchronous step that delivers the
// action log, so it misses none and gets none twice. A core without a
// recorder pays nothing for the feature: no field, no check on any path
// (measured: an idle core's memory is unchanged).
extension Core {
  /// Starts recording the actions reduced from now on, keeping the newest `limit`.
  ///
  /// ```swift
  /// let recorder = await core.record(last: 500)
  /// // … later, when something went wrong:
  /// let report = await recorder.recording()
  /// ```
  ///
  /// The recording starts from the state once every action accepted
  /// before the call is reduced. Each action the reducer runs is kept with
  /// its time (``Recording/Entry/time``, by the core's ``clock``, so a
  /// test's `ManualClock` gives exact times), including the follow-ups
  /// that effects send, after any middleware. Once more than `limit` are
  /// kept, the oldest is dropped and the recording's ``Recording/initialState``
  /// moves past it. Several recorders may record one core at once.
  ///
  /// On a core that has shut down, the recorder holds the final state and
  /// no action.
  ///
  /// - Parameter limit: The most actions kept, at least 1 (1,000 by
  ///   default). The recorder holds as many states.
  /// - Returns: The recorder; release it or call ``Recorder/cancel()`` when
  ///   done.
  public func record(last limit: Int = 1_000) async -> Recorder<State, Action> {
    if limit < 1 {
      programmerError("Core.record(last: \(limit)): a recording keeps at least 1 action")
    }
    await prepareRegistration()
    let storage = RecorderStorage<State, Action>(
      limit: limit, initialState: currentState, clock: clock, counter: observerCounter)
    if lifecycle.isStopped {
      storage.stop()
    } else {
      observers.addRecorder(storage)
    }
    return Recorder(storage: storage) { [weak self] in await self?.catchUpForRecording() }
  }

  /// What ``Recorder/recording()`` waits for: every action accepted before
  /// the call reduced (or, under a journal, passed by its drain).
  func catchUpForRecording() async {
    checkNotRunningUserCode("Recorder.recording()")
    await catchUpQueued()
  }

  /// Reduces the recording's actions in order, as if sent, starting no
  /// effect: the recording holds the actions effects sent.
  ///
  /// ```swift
  /// let core = Core(initialState: report.initialState, reducer: appReducer)
  /// try await core.replay(report)
  /// assert(await core.state == report.finalState)
  /// ```
  ///
  /// Actions accepted before the call are reduced first. Each action goes
  /// to the reducer and is published as a dispatched one is: every-state
  /// observers, the action log (``actions(buffering:)``) and recorders see
  /// each one; latest-value observers and subscribers see the state after
  /// each slice. What the reducer returns is dropped, `.send` effects
  /// included. Middleware does not run (a recording holds the actions as
  /// the reducer got them). The core's state is not set to the recording's
  /// ``Recording/initialState``: make the core with it.
  ///
  /// The actions are reduced a slice (16,384 actions) at a time; between
  /// slices the core serves other callers, whose actions may then come
  /// between two slices. On a durable core each slice is journaled like
  /// any other.
  ///
  /// - Throws: ``CoreError/shutDown`` if the core has begun to shut down
  ///   (``hasShutDown``) when the call begins (nothing is reduced) or when
  ///   it looks again after each full slice (the actions reduced before
  ///   stay reduced; the rest are not). On a durable core,
  ///   ``CoreError/journal(_:)`` if the journal failed. Cancelling the
  ///   calling task does not stop it.
  public func replay(_ recording: Recording<State, Action>) async throws(CoreError) {
    try await replay(actions: recording.entries.lazy.map(\.action))
  }

  /// ``replay(_:)`` of bare actions, for `TestCore`.
  package func replay(actions: some Sequence<Action>) async throws(CoreError) {
    guard lifecycle.acceptsOutsideActions else { throw .shutDown }
    checkNotRunningUserCode()
    await catchUpQueued()
    var iterator = actions.makeIterator()
    while true {
      if journal != nil { try await acquireJournalTurn() }
      var count = 0
      var lineage: Lineage?
      journal?.isReducing = true
      while count < Self.drainSlice, let action = iterator.next() {
        journal?.isEnvelopeAction = false
        count += 1
        guard stageForJournal(action) else { continue }
        reduceOneAfterMiddleware(action, lineage: &lineage, startingEffects: false)
      }
      journal?.isReducing = false
      countReduced(count)
      if journal != nil {
        journal?.machine.took(0)
        guard await appendStaged() else { throw journal?.machine.failure ?? .shutDown }
        _ = await endTurn()
      } else {
        publishBatch()
      }
      guard count == Self.drainSlice else { return }
      await Task.yield()
      guard lifecycle.acceptsOutsideActions else { throw .shutDown }
      // What others sent meanwhile comes before the next slice.
      await catchUpQueued()
    }
  }
}
