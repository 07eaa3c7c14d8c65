import AsyncCore

extension SequenceRun {
  // MARK: Shutdown

  func shutdown(_ mode: ShutdownMode) async throws(Divergence) {
    if mode == .graceful {
      begin("shutdown() (graceful)")
      try await catchUpJournal()  // the core runs exactly the effects the model does
      // Runs until the call's first suspension: by then outside actions are refused.
      let stopping = Task.immediate { [core] in await core.shutdown() }
      try await checkRefusals(while: "a graceful shutdown")
      // Every effect runs to its end and what it sends is reduced, effects
      // the follow-ups start included.
      while model.nextTimer != nil { try await advance() }
      begin("shutdown() (graceful): waiting for it to return")
      // If the test's time limit cancels the wait, hurry the shutdown rather than hang.
      await withTaskCancellationHandler {
        await stopping.value
      } onCancel: { [core] in
        Task { await core.shutdown(.immediate) }
      }
      try check(failures.all.isEmpty, "diagnostics", "effects reported \(failures.all)")
    } else {
      begin("shutdown(.immediate)")
      let refusableEffects = model.unflushed.refusableEffects
      if model.unflushed.followUps > 0 { model.exercised.insert(.refusedEffectsReported) }
      await core.shutdown(.immediate)
      model.live = [:]
      // Every handle is finished once shutdown(.immediate) returned.
      let unfinished = handles.filter { !$0.isFinished }.count
      try check(
        unfinished == 0, "handles finished", "\(unfinished) of \(handles.count) unfinished",
        items: [.handlesFinishedAfterShutdown])
      // Effects the last reduced actions returned were refused, each
      // reported as an effect refused; no other effect failed.
      let failures = failures.all
      let refused = failures.filter { failure in
        guard case .effectRefused? = failure.error as? CoreDiagnostic else { return false }
        return true
      }
      try check(
        refused.count == failures.count && failures.count <= refusableEffects,
        "refused effects reported", "\(failures.count) reports (at most \(refusableEffects)): \(failures)",
        items: [.refusedEffectsReported])
    }
    model.phase = .stopped
    try check(core.hasShutDown, "hasShutDown", "false after shutdown returned", items: [.hasShutDownAgrees])
    try check(clock.sleeperCount == 0, "effects ended", "\(clock.sleeperCount) timers still asleep")
    let state = await core.state
    try check(state == model.state, "state after shutdown", "core \(state), model \(model.state)")
    try await finish(journal)
    for (index, observer) in observers.enumerated() {
      operation += "; observer \(index)"
      try await finish(observer)
    }
    observers = []
    for handle in handles {
      // Returns: nothing is left running.
      do { try await handle.finish() } catch { throw divergence("finish", "cancelled before the effects ended") }
    }
  }

  /// Reads an observer the core ended to its end: every value it has not
  /// taken, then the end of the loop.
  func finish(_ observer: Observer) async throws(Divergence) {
    while let value = await observer.next() { try accept(value, by: observer) }
    let history = observer.history(model)
    if observer.kind.isLatest {
      try check(
        observer.lastTaken == observer.kind.select(model.state), "latest ends on the final state",
        "\(observer.kind) ended on \(observer.lastTaken as Any), the final is \(observer.kind.select(model.state))")
    } else {
      try check(
        observer.taken == history.count, "every-value sequence",
        "\(observer.kind) ended after \(observer.taken) values, the model has \(history.count)",
        items: observer.kind.items)
    }
  }

  /// Outside actions are refused from the moment `shutdown` was called.
  func checkRefusals(while phase: String) async throws(Divergence) {
    let action = ModelAction.log(tag())
    try check(core.hasShutDown, "hasShutDown", "false \(phase)", items: [.hasShutDownAgrees])
    try check(core.send(action) == .shutDown, "send refused", "send not refused \(phase)")
    try check(
      core.send(contentsOf: [action, action]) == .shutDown, "send refused", "send(contentsOf:) not refused \(phase)")
    var thrown: CoreError?
    do throws(CoreError) {
      try await core.dispatch(action)
    } catch {
      thrown = error
    }
    try check(thrown == .shutDown, "dispatch refused", "dispatch threw \(thrown as Any) \(phase)")
    thrown = nil
    do throws(CoreError) {
      try await core.dispatch(contentsOf: [action])
    } catch {
      thrown = error
    }
    try check(thrown == .shutDown, "dispatch refused", "dispatch(contentsOf:) threw \(thrown as Any) \(phase)")
  }

  // MARK: Operations after shutdown

  func stoppedStep() async throws(Divergence) {
    switch Int.random(in: 0..<6, using: &random) {
    case 0:
      begin("sends and dispatches after shutdown")
      try await checkRefusals(while: "after shutdown")
    case 1:
      let kind = Observer.Kind.allCases.randomElement(using: &random)!
      begin("observe \(kind) after shutdown")
      // Registered on a stopped core: the current value (none for the log), then the end.
      let observer = await Observer(kind: kind, core: core, model: model)
      try await finish(observer)
      try check(
        observer.taken == (kind == .actionLog ? 0 : 1), "observer after shutdown",
        "\(kind) received \(observer.taken) values")
    case 2:
      let seconds = Int.random(in: 1...5, using: &random)
      begin("advance \(seconds)s after shutdown")
      await clock.advance(by: .seconds(seconds))
      model.now += seconds
      try await sync("advancing a stopped core's clock")
    case 3:
      begin("waitUntilIdle after shutdown")
      try await waitUntilIdle()
      try await sync("waitUntilIdle")
    case 4:
      let mode: ShutdownMode = random.chance(50) ? .graceful : .immediate
      begin("shutdown(\(mode)) again")
      await core.shutdown(mode)
      try await sync("a second shutdown")
    default:
      begin("await core.state after shutdown")
      try await sync("await core.state")
    }
  }
}
