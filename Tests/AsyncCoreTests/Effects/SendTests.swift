import AsyncCore
import AsyncCoreTesting
import Testing

/// A `Send` is valid while its own effect runs. Once that
/// effect was cancelled or has ended, `send` refuses from any task, and what
/// is refused is not reduced.
@Suite("Send validity", .hangDetector)
struct SendValidityTests {
  enum Action: Sendable, Equatable {
    /// Runs effect `n`: it hands its `Send` to the test and to a `Task {}`
    /// that sends once the test opens the gate, then ends or sleeps.
    case start(Int)
    case stop
    case fromTask(Int)
    case fromTest(Int)
  }

  /// How effect 1 stops running before its `Send` is used.
  enum Ending: String, CaseIterable, Sendable {
    /// It returned.
    case ended
    /// `.cancel(id:)`.
    case cancelledByID
    /// A newer effect with the same id and `cancelInFlight: true`.
    case cancelledInFlight
  }

  struct EffectID: Hashable, Sendable {}

  struct Sent: Sendable, Equatable {
    var effect: Int
    var result: SendResult
  }

  struct Harness {
    let clock = ManualClock()
    let sends = Signal<Send<Action>>()
    let fromTasks = Signal<Sent>()
    let letTasksSend = Gate()
    let core: Core<[Action], Action>

    init(ending: Ending) {
      let (sends, fromTasks, letTasksSend) = (sends, fromTasks, letTasksSend)
      core = Core(initialState: [], clock: clock) { log, action in
        switch action {
        case .start(let effect):
          return .run { send in
            sends.emit(send)
            // An unstructured task the effect hands its `Send` to.
            Task {
              await letTasksSend.wait()
              fromTasks.emit(Sent(effect: effect, result: await send(.fromTask(effect))))
            }
            if ending != .ended {
              try await send.clock.sleep(for: .seconds(3_600))
            }
          }
          .cancellable(id: EffectID(), cancelInFlight: true)
        case .stop:
          return .cancel(id: EffectID())
        case .fromTask, .fromTest:
          log.append(action)
          return .none
        }
      }
    }
  }

  @Test("a Send is refused from any task once its effect has stopped", arguments: Ending.allCases)
  func sendAfterItsEffectStopped(ending: Ending) async throws {
    let harness = Harness(ending: ending)
    let core = harness.core
    let first = try await core.dispatch(.start(1))
    let firstSend = try #require(await harness.sends.next())
    var secondSend: Send<Action>?
    switch ending {
    case .ended:
      break
    case .cancelledByID:
      try await harness.clock.waitForSleepers(atLeast: 1)
      try await core.dispatch(.stop)
    case .cancelledInFlight:
      try await harness.clock.waitForSleepers(atLeast: 1)
      try await core.dispatch(.start(2))
      let send = try #require(await harness.sends.next())
      secondSend = send
    }
    try await first.finish()  // effect 1 has ended

    // Ended, whether it was cancelled first or not: ending is what is told.
    #expect(await firstSend(.fromTest(1)) == .effectEnded)  // from the test's task
    if let secondSend {
      #expect(await secondSend(.fromTest(2)) == .accepted)  // effect 2 still runs: its Send is valid
    }
    harness.letTasksSend.open()
    var fromTasks: [Sent] = []
    for _ in 0..<(secondSend == nil ? 1 : 2) {
      fromTasks.append(try #require(await harness.fromTasks.next()))
    }
    #expect(fromTasks.first { $0.effect == 1 } == Sent(effect: 1, result: .effectEnded))  // from the effect's Task {}
    if secondSend != nil {
      #expect(fromTasks.first { $0.effect == 2 } == Sent(effect: 2, result: .accepted))
    }
    // What was refused was not reduced.
    let expected: [Action] = secondSend == nil ? [] : [.fromTest(2), .fromTask(2)]
    #expect(await core.state == expected)
    await core.shutdown(.immediate)
  }
}

/// What `await send(action)` in an effect waits for, and what it returns
/// once the core, the effect or its child is gone.
@Suite("What an effect's send returns", .hangDetector)
struct SendResultOfEffectsTests {
  enum Step: Sendable, Equatable {
    case start
    case hold
    case mark
  }

  @Test("await send returns once the core accepted the action, before the reducer has run it")
  func returnsOnAcceptance() async throws {
    let reduced = Events<Step>()
    let holding = Signal<Void>()
    // Keeps the core inside `.hold`'s reduction, so it can reduce nothing
    // else, until the effect's send has returned.
    let release = Gate()
    let observed = Signal<(result: SendResult, reduced: [Step])>()
    let core = Core<[Step], Step>(initialState: []) { log, step in
      log.append(step)
      reduced.record(step)
      switch step {
      case .start:
        return .run { send in
          await send(.hold)
          await holding.next()
          let result = await send(.mark)
          observed.emit((result, reduced.all))
          release.open()
        }
      case .hold:
        holding.emit()
        if !release.spinUntilOpen() { Issue.record("the effect's send did not return while .hold was reduced") }
        return .none
      case .mark:
        return .none
      }
    }
    let effects = try await core.dispatch(.start)
    let (result, reducedWhenSendReturned) = try #require(await observed.next())
    #expect(result == .accepted)
    #expect(reducedWhenSendReturned == [.start, .hold])  // .mark was not reduced yet
    try await effects.finish()
    #expect(await core.state == [.start, .hold, .mark])  // accepted: reduced after
  }

  enum ChildAction: Sendable, Equatable {
    case start
    case late
  }

  enum ParentAction: Sendable, Equatable {
    case child(ChildAction)
    case close

    static let childCase = ActionCase(embed: ParentAction.child) {
      if case .child(let action) = $0 { action } else { nil }
    }
  }

  @Test("a child's effect that sends after its child left the state gets .effectCancelled", arguments: [true, false])
  func childRemoved(removed: Bool) async throws {
    let letSend = Gate()
    let started = Signal<Void>()
    let results = Signal<SendResult>()
    let child = Reduce<Int, ChildAction> { count, action in
      switch action {
      case .start:
        return .run { send in
          started.emit()
          await letSend.wait()  // not cancellable: the effect runs on after its child left
          results.emit(await send(.late))
        }
      case .late:
        count += 1
        return .none
      }
    }
    let parent = Reduce<Int?, ParentAction> { state, action in
      if action == .close { state = nil }
      return .none
    }
    let core = Core(
      initialState: 0,
      reducer: parent.ifLet(\.self, action: ParentAction.childCase, then: child))
    let effects = try await core.dispatch(.child(.start))
    try #require(await started.next() != nil)  // cancelled before it started, it would not run at all
    if removed { try await core.dispatch(.close) }
    letSend.open()
    #expect(await results.next() == (removed ? .effectCancelled : .accepted))
    try await effects.finish()
    #expect(await core.state == (removed ? nil : 1))
  }

  /// How the core goes away while its effect waits to send.
  enum Stop: String, CaseIterable, Sendable {
    case graceful
    case immediate
    case release
  }

  @Test(
    "an effect's send once the core stops: accepted during a graceful shutdown, else .shutDown",
    arguments: Stop.allCases)
  func sendOnceTheCoreStops(stop: Stop) async throws {
    let letSend = Gate()
    let started = Signal<Void>()
    let results = Signal<SendResult>()
    let reduced = Events<Int>()
    var core: Core<Int, Int>? = Core<Int, Int>(initialState: 0) { state, action in
      state += action
      reduced.record(action)
      guard action == 0 else { return .none }
      return .run { send in
        started.emit()
        // Let through by the test, or by the cancellation a stop brings.
        await withTaskCancellationHandler {
          await letSend.wait()
        } onCancel: {
          letSend.open()
        }
        results.emit(await send(1))
      }
    }
    let effects = try await core!.dispatch(0)
    try #require(await started.next() != nil)
    switch stop {
    case .graceful, .immediate:
      let stopping = Task { [core] in await core!.shutdown(stop == .graceful ? .graceful : .immediate) }
      try #require(await yieldUntil { core!.hasShutDown })
      letSend.open()
      #expect(await results.next() == (stop == .graceful ? .accepted : .shutDown))
      await stopping.value
    case .release:
      weak let released = core
      core = nil  // its deinit cancels the effect
      #expect(await results.next() == .shutDown)
      try await effects.finish()
      #expect(released == nil)
    }
    #expect(reduced.all == (stop == .graceful ? [0, 1] : [0]))
  }
}
