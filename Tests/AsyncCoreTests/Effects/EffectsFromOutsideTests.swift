import AsyncCore
import AsyncCoreTesting
import Testing

/// What a caller outside the reducer can do with a core's effects:
/// cancel them by id, count them, wait for them and give up.
@Suite("Effects from outside the reducer", .hangDetector)
struct EffectsFromOutsideTests {
  enum Action: Sendable, Equatable {
    /// An hour's sleep marked `.cancellable(id:)` with an Int id.
    case sleep(Int)
    /// The same, marked with a UInt8 id of the same value.
    case sleepUInt8(UInt8)
    /// Two sleeps merged, unmarked.
    case twoSleeps
    case noEffect
    case log(String)
    /// Records `effectsInFlight`, read by the reducer.
    case countInReducer
    /// Returns `.cancel(id: 1)`.
    case cancelOne
  }

  static func makeCore(clock: ManualClock, weak: WeakBox<Core<[String], Action>>? = nil) -> Core<[String], Action> {
    let core = Core<[String], Action>(initialState: [], clock: clock) { log, action in
      let hour: @Sendable (Send<Action>) async throws -> Void = { try await $0.clock.sleep(for: .seconds(3_600)) }
      switch action {
      case .sleep(let id):
        return .run(operation: hour).cancellable(id: id)
      case .sleepUInt8(let id):
        return .run(operation: hour).cancellable(id: id)
      case .twoSleeps:
        return .merge([.run(operation: hour), .run(operation: hour)])
      case .noEffect:
        return .send(.log("sync"))
      case .log(let line):
        log.append(line)
        return .none
      case .countInReducer:
        log.append("in flight: \(weak?.object?.metrics.effectsInFlight ?? -1)")
        return .none
      case .cancelOne:
        return .cancel(id: 1)
      }
    }
    weak?.set(core)
    return core
  }

  // MARK: - cancelEffects(id:)

  @Test("cancelEffects(id:) cancels the effects marked with that id, and not those of an equal id of another type")
  func cancelByID() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock)
    let one = try await core.dispatch(.sleep(1))
    let other = try await core.dispatch(.sleepUInt8(1))
    let two = try await core.dispatch(.sleep(2))
    try await clock.waitForSleepers(atLeast: 3)
    await core.cancelEffects(id: 1)
    try await one.finish()
    #expect(!other.isFinished)
    #expect(!two.isFinished)
    #expect(core.metrics.effectsInFlight == 2)
    await core.cancelEffects(id: 1)  // nothing marked 1 is left: nothing happens
    await core.cancelEffects(id: UInt8(1))
    await core.cancelEffects(id: 2)
    try await core.waitUntilIdle()
    #expect(clock.sleeperCount == 0)
  }

  @Test("cancelEffects(id:) reduces what this task sent first, so the effects those actions start are cancelled")
  func sentBeforeIsCancelled() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock)
    core.send(.sleep(7))
    await core.cancelEffects(id: 7)
    try await core.waitUntilIdle()  // returns only because the hour-long effect was cancelled
    #expect(core.metrics.effectsInFlight == 0)
    #expect(clock.now == .zero)
  }

  @Test("cancelEffects(id:) from inside an effect marked with that id cancels that effect too")
  func cancelFromInsideAnEffect() async throws {
    let weak = WeakBox<Core<Int, Int>>()
    let seen = Signal<Bool>()
    let core = Core<Int, Int>(initialState: 0) { state, action in
      state += action
      return .run { _ in
        await weak.object?.cancelEffects(id: "self")
        seen.emit(Task.isCancelled)
      }
      .cancellable(id: "self")
    }
    weak.set(core)
    try await core.dispatch(1).finish()
    #expect(await seen.next() == true)
  }

  @Test("cancelEffects(id:) from a reducer stops the program with a message")
  func cancelFromAReducerTraps() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let reference = WeakBox<Core<Int, Int>>()
      let core = Core<Int, Int>(
        initialState: 0,
        reducer: Reduce { state, action in
          state += action
          reference.object?.assumeIsolated { core in core.cancelEffects(id: 1) }
        })
      reference.set(core)
      _ = try? await core.dispatch(1)
    }
    ProgrammerErrorTests.expectMessage(result, containing: "AsyncCore: a reducer")
    ProgrammerErrorTests.expectMessage(result, containing: "(through cancelEffects(id:))")
  }

  @Test("cancelEffects(id:) races shutdown(.immediate): both return, every effect has ended", arguments: 0..<20)
  func cancelRacesShutdown(round: Int) async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock)
    try await core.dispatch(contentsOf: [.sleep(1), .sleep(2)])
    async let cancelled: Void = core.cancelEffects(id: 1)
    async let stopped: Void = core.shutdown(.immediate)
    _ = await (cancelled, stopped)
    #expect(core.metrics.effectsInFlight == 0)
    #expect(clock.sleeperCount == 0)
  }

  // MARK: - Cancellation handlers that call back into the core

  enum Canceller: String, CaseIterable, Sendable {
    case cancelEffects, effectCancel, handleCancel, shutdownImmediately
  }

  @Test(
    "a cancellation handler may call back into the core (effectsInFlight, send, EffectHandle.cancel, cancelEffects)",
    arguments: Canceller.allCases)
  func reentrantCancellationHandler(canceller: Canceller) async throws {
    let clock = ManualClock()
    let weak = WeakBox<Core<[String], Action>>()
    let otherHandle = Box<EffectHandle?>(nil)
    let handlerSaw = Box<Int?>(nil)
    let inside = Signal<Void>()
    let core = Core<[String], Action>(initialState: [], clock: clock) { log, action in
      switch action {
      case .sleep(1):
        return .run { send in
          try await withTaskCancellationHandler {
            inside.emit()
            try await send.clock.sleep(for: .seconds(3_600))
          } onCancel: {
            // Runs synchronously inside whatever cancels the effect: none of
            // these may wait for a lock that canceller holds.
            guard let core = weak.object else { return }
            handlerSaw.set(core.metrics.effectsInFlight)
            core.send(.log("handler sent"))
            otherHandle.value?.cancel()
            Task { await core.cancelEffects(id: 3) }
          }
        }
        .cancellable(id: 1)
      case .sleep(let id):
        return .run { send in try await send.clock.sleep(for: .seconds(3_600)) }.cancellable(id: id)
      case .cancelOne:
        return .cancel(id: 1)
      case .log(let line):
        log.append(line)
        return .none
      default:
        return .none
      }
    }
    weak.set(core)
    let first = try await core.dispatch(.sleep(1))
    otherHandle.set(try await core.dispatch(.sleep(2)))
    try await core.dispatch(.sleep(3))
    try #require(await inside.next() != nil)
    try await clock.waitForSleepers(atLeast: 3)
    switch canceller {
    case .cancelEffects: await core.cancelEffects(id: 1)
    case .effectCancel: try await core.dispatch(.cancelOne)
    case .handleCancel: first.cancel()
    case .shutdownImmediately: await core.shutdown(.immediate)
    }
    try await first.finish()
    try await otherHandle.value?.finish()
    if canceller != .shutdownImmediately {
      try await core.waitUntilIdle()  // the effect marked 3 was cancelled by the handler's task
      #expect(await core.state == ["handler sent"])
    }
    #expect(handlerSaw.value.map { $0 >= 1 } == true)
    await core.shutdown(.immediate)
    #expect(core.metrics.effectsInFlight == 0)
  }

  // MARK: - effectsInFlight

  @Test("effectsInFlight counts each effect that needs a task from the moment it is started until it ends")
  func countsEffectsInFlight() async throws {
    let clock = ManualClock()
    let weak = WeakBox<Core<[String], Action>>()
    let core = Self.makeCore(clock: clock, weak: weak)
    #expect(core.metrics.effectsInFlight == 0)
    try await core.dispatch(.noEffect)  // synchronous effects never count
    #expect(core.metrics.effectsInFlight == 0)
    let one = try await core.dispatch(.sleep(1))
    #expect(core.metrics.effectsInFlight == 1)  // counted once started, queued or running
    try await core.dispatch(.twoSleeps)
    #expect(core.metrics.effectsInFlight == 3)  // each merged part counts
    try await core.dispatch(.countInReducer)  // readable from a reducer
    #expect(await core.state == ["sync", "in flight: 3"])
    try await clock.waitForSleepers(atLeast: 3)
    await core.cancelEffects(id: 1)
    try await one.finish()
    #expect(core.metrics.effectsInFlight == 2)  // the merged sleeps
    await core.shutdown(.immediate)
    #expect(core.metrics.effectsInFlight == 0)
  }

  @Test("effectsInFlight read inside an effect counts that effect")
  func countFromAnEffect() async throws {
    let weak = WeakBox<Core<Int, Int>>()
    let core = Core<Int, Int>(initialState: -1) { state, action in
      guard action == -1 else {
        state = action  // the count the effect read
        return .none
      }
      return .run { send in await send(weak.object?.metrics.effectsInFlight ?? -2) }
    }
    weak.set(core)
    try await core.dispatch(-1).finish()
    #expect(await core.state == 1)  // itself
    #expect(core.metrics.effectsInFlight == 0)
  }

  // MARK: - waitUntilIdle()

  @Test("waitUntilIdle() throws CancellationError when its task is cancelled before the core is idle")
  func waitGivesUp() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock)
    try await core.dispatch(.sleep(1))
    let waiter = Task { try await core.waitUntilIdle() }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(core.metrics.effectsInFlight == 1)  // giving up stopped nothing
    await core.cancelEffects(id: 1)
    try await core.waitUntilIdle()
  }

  @Test("waitUntilIdle() returns, not throws, when the core is idle even if its task is cancelled")
  func idleWinsOverCancelled() async throws {
    let core = Self.makeCore(clock: ManualClock())
    try await core.dispatch(.noEffect)
    let waiter = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await core.waitUntilIdle()
      return await core.state
    }
    #expect(try await waiter.value == ["sync"])
  }
}
