import AsyncCore

extension SequenceRun {
  // MARK: Generating actions

  /// An action for the driving task; now and then a cancel by a `UInt8` id
  /// (which never matches an `Int` one), only here so `preflight` can prepare for it.
  func topLevelAction() -> ModelAction {
    guard random.chance(4) else { return makeAction(depth: 0, base: model.now) }
    return .cancel(tag(), .uint8(UInt8.random(in: 0..<3, using: &random)))
  }

  /// A random action; its timers fire after `base`, the clock time at which
  /// it is reduced. Nesting stops at depth 2.
  ///
  /// `sparing` is the id of the effect that sends this action, if any: the
  /// action, and the follow-ups reduced with it, never cancel that id (by
  /// `.cancel` or `cancelInFlight`). An effect that cancels itself through
  /// what it sends races with its own later sends, and the model could not
  /// say which of them the core refuses.
  func makeAction(depth: Int, base: Int, sparing spared: CancelKey? = nil) -> ModelAction {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<15 where depth < 2:
      let children = (0..<Int.random(in: 1...3, using: &random)).map { _ in
        makeAction(depth: depth + 1, base: base, sparing: spared)
      }
      return .fanOut(tag(), children, concatenated: random.chance(40))
    case 15..<30 where depth < 2:
      let timers = (0..<Int.random(in: 1...2, using: &random)).map { _ in
        makeTimer(depth: depth + 1, base: base, sparing: spared)
      }
      return .timers(tag(), timers)
    case 30..<42:
      let id = CancelKey.int(Int.random(in: 0..<3, using: &random))
      return id == spared ? .log(tag()) : .cancel(tag(), id)
    case 42..<65:
      return .set(Int.random(in: 0..<3, using: &random))
    default:
      return .log(tag())
    }
  }

  /// A random timer started at `base`, which never cancels `spared` in flight.
  func makeTimer(depth: Int, base: Int, sparing spared: CancelKey?) -> TimerSpec {
    let fireAt = deadline(after: base)
    let id: CancelKey? = random.chance(70) ? .int(Int.random(in: 0..<3, using: &random)) : nil
    let cancelInFlight = id != nil && id != spared && random.chance(40)
    let sends = (0..<Int.random(in: 1...2, using: &random)).map { _ in
      makeAction(depth: depth + 1, base: fireAt, sparing: id)
    }
    var then: Continuation?
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<20:
      then = .send(makeAction(depth: depth + 1, base: fireAt, sparing: id))
    case 20..<35:
      let nextFireAt = deadline(after: fireAt)
      let nextSends = [makeAction(depth: depth + 1, base: nextFireAt, sparing: id)]
      then = .timer(
        TimerSpec(token: token(), fireAt: nextFireAt, id: nil, cancelInFlight: false, sends: nextSends, then: nil))
    default:
      break
    }
    return TimerSpec(token: token(), fireAt: fireAt, id: id, cancelInFlight: cancelInFlight, sends: sends, then: then)
  }

  /// A deadline after `base` that no other timer of this sequence has: one
  /// effect wakes per advance, so what effects send arrives in a fixed order.
  func deadline(after base: Int) -> Int {
    var deadline = base + Int.random(in: 1...20, using: &random)
    while deadlines.contains(deadline) { deadline += 1 }
    deadlines.insert(deadline)
    return deadline
  }

  func tag() -> Int {
    nextTag += 1
    return nextTag
  }

  func token() -> Int {
    nextToken += 1
    return nextToken
  }
}
