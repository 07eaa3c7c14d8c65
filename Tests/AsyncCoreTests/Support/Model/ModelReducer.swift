import AsyncCore
import AsyncCoreTesting

/// The state: a log that most actions append a unique tag to, and a value
/// that `.set` may leave unchanged (so deduplication has work to do).
struct ModelState: Sendable, Equatable, CustomStringConvertible {
  var log: [Int] = []
  var value = 0

  var description: String { "{log \(log), value \(value)}" }
}

/// A cancel id of one of two types: cancel ids of different types never match.
enum CancelKey: Sendable, Hashable, CustomStringConvertible {
  case int(Int)
  case uint8(UInt8)

  var description: String {
    switch self {
    case .int(let value): "\(value) as Int"
    case .uint8(let value): "\(value) as UInt8"
    }
  }
}

/// A `.run` effect: asleep on the manual clock until `fireAt` (absolute
/// seconds, unique in the sequence), then sends `sends`; `then` is
/// concatenated after it.
struct TimerSpec: Sendable, Equatable, CustomStringConvertible {
  let token: Int
  let fireAt: Int
  let id: CancelKey?
  let cancelInFlight: Bool
  let sends: [ModelAction]
  let then: Continuation?

  var description: String {
    var text = "timer \(token) at \(fireAt)s"
    if let id { text += cancelInFlight ? " id \(id) cancelling in flight" : " id \(id)" }
    text += " sends \(sends)"
    if let then { text += " then \(then)" }
    return text
  }
}

/// What a timer's `.concatenate` runs after it.
indirect enum Continuation: Sendable, Equatable, CustomStringConvertible {
  /// `.send(action)`, asynchronous because the concatenation holds a `.run`.
  case send(ModelAction)
  /// A second timer (no id or continuation of its own; the concatenation's id covers it).
  case timer(TimerSpec)

  var description: String {
    switch self {
    case .send(let action): "send \(action)"
    case .timer(let timer): "(\(timer))"
    }
  }
}

indirect enum ModelAction: Sendable, Equatable, CustomStringConvertible {
  case log(Int)
  case set(Int)
  /// Logs, then returns `.merge` (or `.concatenate`) of `.send` for each child.
  case fanOut(Int, [ModelAction], concatenated: Bool)
  /// Logs, then returns `.merge` of the timers' effects.
  case timers(Int, [TimerSpec])
  /// Logs, then returns `.cancel(id:)`.
  case cancel(Int, CancelKey)

  var description: String {
    switch self {
    case .log(let tag): "log \(tag)"
    case .set(let value): "set \(value)"
    case .fanOut(let tag, let children, let concatenated):
      "\(concatenated ? "concatenate" : "merge") \(tag) \(children)"
    case .timers(let tag, let timers): "timers \(tag) \(timers)"
    case .cancel(let tag, let id): "cancel \(tag) id \(id)"
    }
  }
}

typealias ModelCore = Core<ModelState, ModelAction>
typealias Record = ActionRecord<ModelState, ModelAction>

/// What a timer's effect reports: that it started, and how it ended.
final class EffectProbe: Sendable {
  struct Ending: Sendable {
    /// The sleep completed: the effect was not cancelled before its deadline.
    var fired = false
    /// Every action it sent was accepted.
    var allAccepted = true
  }

  let started = Signals<Int, Bool>()
  let ended = Signals<Int, Ending>()
}

enum ModelReducer {
  static func make(clock: ManualClock, probe: EffectProbe)
    -> @Sendable (inout ModelState, ModelAction) -> Effect<ModelAction>
  {
    { state, action in
      switch action {
      case .log(let tag):
        state.log.append(tag)
        return .none
      case .set(let value):
        state.value = value
        return .none
      case .fanOut(let tag, let children, let concatenated):
        state.log.append(tag)
        let sends = children.map { Effect<ModelAction>.send($0) }
        return concatenated ? .concatenate(sends) : .merge(sends)
      case .timers(let tag, let timers):
        state.log.append(tag)
        return .merge(timers.map { effect(for: $0, clock: clock, probe: probe) })
      case .cancel(let tag, let id):
        state.log.append(tag)
        switch id {
        case .int(let value): return .cancel(id: value)
        case .uint8(let value): return .cancel(id: value)
        }
      }
    }
  }

  static func effect(for timer: TimerSpec, clock: ManualClock, probe: EffectProbe) -> Effect<ModelAction> {
    var effect = run(timer, clock: clock, probe: probe)
    switch timer.then {
    case .send(let action): effect = .concatenate([effect, .send(action)])
    case .timer(let next): effect = .concatenate([effect, run(next, clock: clock, probe: probe)])
    case nil: break
    }
    switch timer.id {
    case .int(let value): return effect.cancellable(id: value, cancelInFlight: timer.cancelInFlight)
    case .uint8(let value): return effect.cancellable(id: value, cancelInFlight: timer.cancelInFlight)
    case nil: return effect
    }
  }

  /// Sleeps until an absolute deadline on the test's own clock (the one the
  /// core was given; `send.clock` is an `any Clock` whose instants a test
  /// cannot name), so when the effect starts does not move when it fires.
  static func run(_ timer: TimerSpec, clock: ManualClock, probe: EffectProbe) -> Effect<ModelAction> {
    let (token, deadline, sends) = (timer.token, ManualClock.Instant(offset: .seconds(timer.fireAt)), timer.sends)
    return .run { send in
      probe.started.raise(token, true)
      var ending = EffectProbe.Ending()
      defer { probe.ended.raise(token, ending) }
      try await clock.sleep(until: deadline, tolerance: nil)
      ending.fired = true
      for action in sends {
        if await send(action) != .accepted { ending.allAccepted = false }
      }
    }
  }
}
