import AsyncCore
import AsyncCoreTesting
import Testing

/// The state the testing library's own tests drive.
struct Model: Sendable, Equatable {
  struct Form: Sendable, Equatable {
    var name = ""
    var isLoading = false
  }

  var count = 0
  var isLoading = false
  var form = Form()
  var note: String?
}

enum Event: Sendable, Equatable {
  case increment
  case noop
  case setName(String)
  /// Returns `.send(.echoed(n))`.
  case echo(Int)
  case echoed(Int)
  /// Starts an effect that sends `.loaded(42)` at once.
  case load
  case loaded(Int)
  /// Starts an effect that sends `.loaded(1)` then `.loaded(2)`.
  case loadTwice
  /// Starts a timer on the clock: `.tick` every second, until `.stopTimer`.
  case startTimer
  case tick
  case stopTimer
  /// Starts an effect that throws, with no `catch:`.
  case fail
  /// Starts an effect that waits at the gate, ignoring cancellation.
  case wait
  /// Starts an effect that keeps its `Send` in the fixture's `kept` and returns.
  case keep
  /// Starts an effect, cancellable by `.stopWaiting`, that waits at the
  /// gate ignoring cancellation, then sends `.loaded(7)`.
  case waitThenSend
  case stopWaiting
  /// The form's own actions, reduced by `reduceForm` on `Model.form`.
  case form(FormEvent)

  static let formCase = ActionCase(embed: Event.form) { if case .form(let event) = $0 { event } else { nil } }
}

/// The actions of the form, a child feature of `Model`.
enum FormEvent: Sendable, Equatable {
  case rename(String)
  /// Starts an effect that sends `.submitted` at once.
  case submit
  case submitted
  /// Resets the form; the parent also notes it (a change outside the child).
  case clear
}

func reduceForm(_ form: inout Model.Form, _ event: FormEvent) -> Effect<FormEvent> {
  switch event {
  case .rename(let name):
    form.name = name
    return .none
  case .submit:
    form.isLoading = true
    return .run { send in await send(.submitted) }
  case .submitted:
    form.isLoading = false
    return .none
  case .clear:
    form = Model.Form()
    return .none
  }
}

struct Boom: Error {}

/// A reducer with every kind of effect, its clock and its gate.
struct Fixture: Sendable {
  struct TimerID: Hashable, Sendable {}
  struct WaitID: Hashable, Sendable {}

  let clock = ManualClock()
  let gate = Gate()
  /// The `Send` a `.keep` effect kept past its end.
  let kept = Recorded<Send<Event>>()

  func reduce(_ state: inout Model, _ action: Event) -> Effect<Event> {
    switch action {
    case .increment:
      state.count += 1
      return .none
    case .noop:
      return .none
    case .setName(let name):
      state.form.name = name
      return .none
    case .echo(let value):
      return .send(.echoed(value))
    case .echoed(let value):
      state.count = value
      return .none
    case .load:
      state.isLoading = true
      return .run { send in await send(.loaded(42)) }
    case .loaded(let value):
      state.isLoading = false
      state.count = value
      return .none
    case .loadTwice:
      return .run { send in
        await send(.loaded(1))
        await send(.loaded(2))
      }
    case .startTimer:
      return .run { send in
        while true {
          try await send.clock.sleep(for: .seconds(1))
          await send(.tick)
        }
      }
      .cancellable(id: TimerID())
    case .tick:
      state.count += 1
      return .none
    case .stopTimer:
      return .cancel(id: TimerID())
    case .fail:
      return Self.failingEffect()
    case .wait:
      let gate = self.gate
      return .run { _ in await gate.wait() }
    case .waitThenSend:
      let gate = self.gate
      return .run { send in
        await gate.wait()
        await send(.loaded(7))
      }
      .cancellable(id: WaitID())
    case .stopWaiting:
      return .cancel(id: WaitID())
    case .keep:
      let kept = self.kept
      return .run { send in kept.append(send) }
    case .form(let event):
      if event == .clear { state.note = "cleared" }
      return reduceForm(&state.form, event).map(Event.form)
    }
  }

  /// Where `.keep`'s effect is made, as the diagnostics name it.
  static let keepingEffectMadeAt = "AsyncCoreTestingTests/Fixture.swift:\(#line - 8)"

  /// Where `failingEffect()` makes its effect, as the diagnostics name it.
  static let failingEffectMadeAt = "AsyncCoreTestingTests/Fixture.swift:\(#line + 3)"

  static func failingEffect() -> Effect<Event> {
    .run { _ in throw Boom() }
  }

  /// Waits are bounded generously: CI runs the suite under ThreadSanitizer
  /// beside stress tests, where an effect can take seconds to be scheduled.
  /// A bound is not a delay: a passing wait ends as soon as its action comes.
  static let timeout = Duration.seconds(30)

  func makeStore(
    exhaustivity: Exhaustivity = .on,
    timeout: Duration = Fixture.timeout,
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> TestCore<Model, Event> {
    TestCore(
      initialState: Model(), clock: clock, exhaustivity: exhaustivity, timeout: timeout,
      sourceLocation: sourceLocation, reducer: reduce)
  }
}

extension ManualClock {
  /// Waits until `count` tasks sleep on the clock; a wait the test's time
  /// limit cut short is recorded as an issue.
  func waitForSleepers(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
      try await waitForSleepers(atLeast: count)
    } catch {
      Issue.record("gave up waiting for \(count) sleepers on the manual clock", sourceLocation: sourceLocation)
    }
  }
}
