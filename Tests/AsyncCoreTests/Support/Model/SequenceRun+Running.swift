import AsyncCore

extension SequenceRun {
  // MARK: Operations while running

  func runningStep() async throws(Divergence) {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<18:
      let action = topLevelAction()
      try await preflight(action)
      begin("send \(action)")
      model.send(action)
      try check(core.send(action) == .accepted, "send accepted", "send refused on a running core")
    case 18..<26:
      let actions = (0..<Int.random(in: 1...4, using: &random)).map { _ in makeAction(depth: 0, base: model.now) }
      begin("send(contentsOf: \(actions))")
      for action in actions { model.send(action) }
      try check(
        core.send(contentsOf: actions) == .accepted, "send accepted", "send(contentsOf:) refused on a running core")
    case 26..<40:
      let action = topLevelAction()
      try await preflight(action)
      begin("dispatch \(action)")
      try await dispatch([action], contentsOf: false)
    case 40..<47:
      let actions = (0..<Int.random(in: 1...4, using: &random)).map { _ in makeAction(depth: 0, base: model.now) }
      begin("dispatch(contentsOf: \(actions))")
      try await dispatch(actions, contentsOf: true)
    case 47..<52:
      begin("await core.state")
      try await sync("await core.state")
    case 52..<62 where observers.count < 6:
      let kind = Observer.Kind.allCases.randomElement(using: &random)!
      begin("observe \(kind)")
      observers.append(await Observer(kind: kind, core: core, model: model))
      model.unflushed = Model.Reduction()  // registering reduces what was sent first
    case 62..<76 where observers.contains { $0.hasValue(model) }:
      let readable = observers.indices.filter { observers[$0].hasValue(model) }
      let index = readable.randomElement(using: &random)!
      let count = Int.random(in: 1...4, using: &random)
      begin("read \(count) from observer \(index) (\(observers[index].kind))")
      try await catchUpJournal()
      try await read(observers[index], upTo: count)
    case 76..<80 where !observers.isEmpty:
      let index = Int.random(in: observers.indices, using: &random)
      begin("drop observer \(index) (\(observers[index].kind))")
      observers.remove(at: index)
    case 80..<93:
      try await advance()
    case 93..<98 where model.live.isEmpty:
      begin("waitUntilIdle")
      try await catchUpJournal()
      try await waitUntilIdle()
      try await sync("waitUntilIdle")
    case 98..<100:
      try await shutdown(random.chance(50) ? .graceful : .immediate)
    default:
      try await advance()
    }
  }

  func dispatch(_ actions: [ModelAction], contentsOf: Bool) async throws(Divergence) {
    var reduction = Model.Reduction()
    for action in actions { reduction += model.reduce(action) }
    model.unflushed = Model.Reduction()  // dispatch reduces what was sent first
    let handle: EffectHandle
    do {
      handle = try await contentsOf ? core.dispatch(contentsOf: actions) : core.dispatch(actions[0])
    } catch {
      throw divergence("dispatch accepted", "dispatch threw \(error) on a running core")
    }
    handles.append(handle)
    if reduction.timersStarted == 0 {
      // `.send` follow-ups are reduced before dispatch returns, so
      // a dispatch that started no `.run` has nothing left to wait for.
      try check(
        handle.isFinished, "handle finished", "a dispatch that started no .run is unfinished",
        items: [.followUpsBreadthFirst])
    }
    // Dispatch returns after the follow-ups; `state` right after includes them.
    if random.chance(60) { try await sync("dispatch") }
  }

  /// The model's state is the core's once everything accepted is reduced.
  func sync(_ after: String) async throws(Divergence) {
    let state = await core.state
    try check(state == model.state, "state after \(after)", "core \(state), model \(model.state)")
    model.unflushed = Model.Reduction()
    try await catchUpJournal()
  }

  /// Reads the action log up to the model's count, record by record: waits
  /// for the core's drain without reducing anything itself. Once it caught
  /// up, the core reduced exactly the model's actions, in the model's order,
  /// from the same states: it started and cancelled the same effects, and
  /// every observer has been given what the model expects, so waiting on
  /// either cannot hang on a core that diverged earlier unnoticed.
  func catchUpJournal() async throws(Divergence) {
    while journal.taken < model.records.count {
      guard let record = await journal.next() else {
        throw divergence("action log", "ended after \(journal.taken) records, the model has \(model.records.count)")
      }
      let expected = Seen.record(model.records[journal.taken])
      try check(record == expected, "action log", "record \(journal.taken) is \(record), the model's is \(expected)")
      journal.taken += 1
    }
    model.unflushed = Model.Reduction()  // everything accepted has been reduced
  }

  /// Takes up to `count` values the model says `observer` has.
  func read(_ observer: Observer, upTo count: Int) async throws(Divergence) {
    var read = 0
    while read < count && observer.hasValue(model) {
      guard let value = await observer.next() else {
        throw divergence("observer ended", "\(observer.kind) ended while the core runs")
      }
      try accept(value, by: observer)
      read += 1
      if observer.kind.isLatest { return }  // its next value may not exist yet
    }
  }

  /// Checks one value `observer` received against the model.
  func accept(_ value: Seen, by observer: Observer) throws(Divergence) {
    let history = observer.history(model)
    if observer.kind.isLatest {
      // Any state reached since the last one taken, never an older one, and
      // never the one taken last again.
      try check(
        value != observer.lastTaken, "latest repeats", "\(observer.kind) received \(value) twice in a row",
        items: observer.kind.items)
      let position = history.indices.first { $0 > observer.lastPosition && history[$0] == value }
      guard let position else {
        throw divergence(
          "latest value", "\(observer.kind) received \(value), not a state reached after \(observer.lastTaken as Any)",
          items: observer.kind.items)
      }
      observer.lastPosition = position
      observer.lastTaken = value
    } else {
      let index = observer.taken
      try check(
        index < history.count && history[index] == value, "every-value sequence",
        "\(observer.kind) value \(index) is \(value), the model's is "
          + (index < history.count ? "\(history[index])" : "none (\(history.count) values)"),
        items: observer.kind.items)
    }
    observer.taken += 1
  }

  // MARK: Time

  /// Moves the clock to the next live timer's deadline and waits until the
  /// effect ended and what it sent was reduced; with no live timer, moves
  /// it a few seconds on.
  func advance() async throws(Divergence) {
    // Cancellations sent so far must be in effect before time moves.
    begin("advance: wait until what was sent is reduced")
    try await catchUpJournal()
    guard let timer = model.nextTimer else {
      let seconds = Int.random(in: 1...5, using: &random)
      begin("advance \(seconds)s (no live timer)")
      model.now += seconds
      await clock.advance(by: .seconds(seconds))
      return
    }
    begin("advance to \(timer.fireAt)s: timer \(timer.token) fires")
    await clock.advance(by: .seconds(timer.fireAt - model.now))
    guard let ending = await probe.ended.wait(for: timer.token) else {
      throw divergence("timer ended", "the wait for timer \(timer.token) was cancelled (time limit?)")
    }
    try check(
      ending.fired, "timer fired",
      "timer \(timer.token) (id \(timer.id as Any)) was cancelled; the model has no cancel for it",
      items: model.exercised.contains(.cancelIDsMatchByTypeAndValue) ? [.cancelIDsMatchByTypeAndValue] : [])
    try check(ending.allAccepted, "effect send accepted", "timer \(timer.token)'s send was refused")
    model.fire(timer)
    try await catchUpJournal()  // what it sent, and a concatenated .send after it
    try await sync("timer \(timer.token) fired")
  }

  /// Before a cancel by a `UInt8` id: the model cancels no `Int` id with it
  /// (cancel ids match by type and value). A core that does must find those effects started, so the
  /// wrong cancellation shows when they end unfired instead of as a hang.
  func preflight(_ action: ModelAction) async throws(Divergence) {
    guard case .cancel(_, .uint8(let value)) = action else { return }
    model.exercised.insert(.cancelIDsMatchByTypeAndValue)
    begin("before cancelling \(value) as UInt8: wait for Int-\(value) timers to start")
    try await catchUpJournal()
    for timer in model.live.values where timer.id == .int(Int(value)) {
      guard await probe.started.wait(for: timer.token) != nil else {
        throw divergence("timer started", "the wait for timer \(timer.token) was cancelled (time limit?)")
      }
    }
  }
}
