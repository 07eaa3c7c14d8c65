import AsyncCore
import AsyncCoreTesting
import Testing

/// A `Send` is valid while its own effect runs. Once that
/// effect was cancelled or has ended, `send` returns `false` from any task,
/// and what is refused is not reduced.
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
    var accepted: Bool
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
              fromTasks.emit(Sent(effect: effect, accepted: await send(.fromTask(effect))))
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

    #expect(await firstSend(.fromTest(1)) == false)  // from the test's task
    if let secondSend {
      #expect(await secondSend(.fromTest(2)))  // effect 2 still runs: its Send is valid
    }
    harness.letTasksSend.open()
    var fromTasks: [Sent] = []
    for _ in 0..<(secondSend == nil ? 1 : 2) {
      fromTasks.append(try #require(await harness.fromTasks.next()))
    }
    #expect(fromTasks.first { $0.effect == 1 } == Sent(effect: 1, accepted: false))  // from the effect's Task {}
    if secondSend != nil {
      #expect(fromTasks.first { $0.effect == 2 } == Sent(effect: 2, accepted: true))
    }
    // What was refused was not reduced.
    let expected: [Action] = secondSend == nil ? [] : [.fromTest(2), .fromTask(2)]
    #expect(await core.state == expected)
    await core.shutdown(.immediate)
  }
}
