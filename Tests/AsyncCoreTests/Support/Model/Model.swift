import AsyncCore

/// The core as a plain sequential program: every action accepted is reduced at
/// once, in the order the core must reduce it (the driving task's order, with
/// `.send` follow-ups breadth first right after their action).
struct Model {
  struct LiveTimer {
    let token: Int
    let fireAt: Int
    let id: CancelKey?
    let sends: [ModelAction]
    let then: Continuation?
  }

  /// What one reduction (an action and its follow-ups) did.
  struct Reduction {
    var followUps = 0
    var timersStarted = 0
    /// Effects other than `.send`: a core refusing new effects reports each.
    var refusableEffects = 0

    static func += (lhs: inout Reduction, rhs: Reduction) {
      lhs.followUps += rhs.followUps
      lhs.timersStarted += rhs.timersStarted
      lhs.refusableEffects += rhs.refusableEffects
    }
  }

  enum Phase { case running, stopped }

  var state = ModelState()
  /// Every action reduced, in order: what the action log must deliver.
  var records: [Record] = []
  var live: [Int: LiveTimer] = [:]
  var now = 0
  var phase = Phase.running
  /// The guarantees this sequence has relied on so far.
  var exercised: Set<Guarantee> = []
  /// What was sent since the core last reduced everything it had accepted:
  /// a `shutdown(.immediate)` may reduce it after refusing new effects.
  var unflushed = Reduction()

  /// Reduces `action`, then its `.send` follow-ups breadth first:
  /// A returns merge(send B, send C), B returns send D: A, B, C, D.
  mutating func reduce(_ action: ModelAction) -> Reduction {
    var reduction = Reduction()
    var queue = [action]
    var next = 0
    while next < queue.count {
      let action = queue[next]
      next += 1
      let before = state
      switch action {
      case .log(let tag):
        state.log.append(tag)
      case .set(let value):
        state.value = value
      case .fanOut(let tag, let children, _):
        state.log.append(tag)
        queue.append(contentsOf: children)
      case .timers(let tag, let timers):
        state.log.append(tag)
        for timer in timers { start(timer) }
        reduction.timersStarted += timers.count
        reduction.refusableEffects += timers.count
      case .cancel(let tag, let id):
        state.log.append(tag)
        cancel(id)
        reduction.refusableEffects += 1
      }
      records.append(Record(action: action, stateBefore: before, stateAfter: state))
    }
    reduction.followUps = queue.count - 1
    if reduction.followUps > 0 { exercised.insert(.followUpsBreadthFirst) }
    return reduction
  }

  /// An action from outside, sent: reduced at once in the model.
  mutating func send(_ action: ModelAction) {
    unflushed += reduce(action)
  }

  mutating func start(_ timer: TimerSpec) {
    if let id = timer.id, timer.cancelInFlight { cancel(id) }
    live[timer.token] = LiveTimer(
      token: timer.token, fireAt: timer.fireAt, id: timer.id, sends: timer.sends, then: timer.then)
  }

  /// Ids match only when type and value do.
  mutating func cancel(_ id: CancelKey) {
    live = live.filter { $0.value.id != id }
  }

  var nextTimer: LiveTimer? {
    live.values.min { $0.fireAt < $1.fireAt }
  }

  /// The clock reached `timer`'s deadline: what it sends is reduced, in
  /// order, and its continuation runs.
  mutating func fire(_ timer: LiveTimer) {
    live[timer.token] = nil
    now = timer.fireAt
    // A concatenated timer belongs to the same effect, under the same id, from
    // the start: what the first part sends may cancel it.
    if case .timer(let next) = timer.then {
      live[next.token] = LiveTimer(token: next.token, fireAt: next.fireAt, id: timer.id, sends: next.sends, then: nil)
    }
    for action in timer.sends { _ = reduce(action) }
    if case .send(let action) = timer.then { _ = reduce(action) }
  }
}
