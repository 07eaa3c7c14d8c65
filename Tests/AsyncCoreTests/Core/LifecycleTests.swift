import AsyncCore
import AsyncCoreTesting
import Testing

@Suite("Core lifetime: run(), shutdown and release", .hangDetector)
struct LifecycleTests {
  enum Service {
    @TaskLocal static var name: String?
  }

  enum Action: Sendable, Equatable {
    case start
    case probe
    case finished(cancelled: Bool)
    case servedBy(String?)
  }

  /// `.start` runs an effect that reports which service task it runs under,
  /// sleeps an hour of `clock` time, then reports whether it was cancelled.
  func makeCore(clock: ManualClock) -> Core<[Action], Action> {
    Core(initialState: [], clock: clock) { log, action in
      switch action {
      case .start:
        return .run { send in
          await send(.servedBy(Service.name))
          let cancelled: Bool
          do {
            try await send.clock.sleep(for: .seconds(3_600))
            cancelled = false
          } catch {
            cancelled = true
          }
          await send(.finished(cancelled: cancelled))
        }
      case .probe:
        return .none
      default:
        log.append(action)
        return .none
      }
    }
  }

  @Test("effects run as children of run(); cancelling its task cancels them and shuts the core down")
  func runTiesTheCoreToATask() async throws {
    let clock = ManualClock()
    let core = makeCore(clock: clock)
    // Task.immediate runs up to run()'s first suspension, by which time run()
    // consumes the core's effects.
    let service = Task.immediate {
      try await Service.$name.withValue("feed service") { try await core.run() }
    }
    try await core.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 1)
    #expect(await core.state == [.servedBy("feed service")])  // a task-local of run()'s task

    service.cancel()
    try await service.value
    #expect(core.hasShutDown)
    #expect(clock.sleeperCount == 0)
    // Cancelled, and its last send refused: the core had shut down.
    #expect(await core.state == [.servedBy("feed service")])
    #expect(core.send(.probe) == .shutDown)
  }

  @Test("run() returns when the core is shut down, and a core without run() still runs effects")
  func runReturnsOnShutdown() async throws {
    let clock = ManualClock()
    let core = makeCore(clock: clock)
    try await core.dispatch(.start)  // no run(): the core's own runner
    try await clock.waitForSleepers(atLeast: 1)
    let service = Task.immediate { try await core.run() }
    await clock.advance(by: .seconds(3_600))
    await core.shutdown()
    try await service.value
    #expect(await core.state == [.servedBy(nil), .finished(cancelled: false)])
  }

  @Test("graceful shutdown refuses outside actions, lets effects finish and reduces what they send")
  func gracefulShutdown() async throws {
    let clock = ManualClock()
    let core = makeCore(clock: clock)
    try await core.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 1)
    // Task.immediate runs the call up to its first suspension: by then the
    // shutdown has begun and outside actions are refused.
    let stopping = Task.immediate { await core.shutdown() }
    #expect(core.send(.probe) == .shutDown)
    await #expect(throws: CoreError.shutDown) { try await core.dispatch(.probe) }
    #expect(clock.sleeperCount == 1)  // not cancelled
    await clock.advance(by: .seconds(3_600))
    await stopping.value
    #expect(await core.state == [.servedBy(nil), .finished(cancelled: false)])
  }

  @Test("an immediate shutdown hurries a graceful one that is waiting on an endless effect")
  func immediateHurriesGraceful() async throws {
    let clock = ManualClock()
    let core = makeCore(clock: clock)
    try await core.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 1)
    let graceful = Task.immediate { await core.shutdown() }
    #expect(core.hasShutDown)
    await core.shutdown(.immediate)
    await graceful.value
    #expect(clock.sleeperCount == 0)
    #expect(await core.state == [.servedBy(nil)])  // .finished was refused
  }

  @Test("releasing the last reference cancels the core's effects")
  func releaseCancelsEffects() async throws {
    let clock = ManualClock()
    var core: Core<[Action], Action>? = makeCore(clock: clock)
    let effects = try await core!.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 1)
    weak let released = core
    core = nil
    // A drain task may hold the core a moment longer; the effect ends only
    // once the core is gone and has cancelled it.
    try await effects.finish()
    #expect(released == nil)
    #expect(clock.sleeperCount == 0)
  }

  @Test("releasing a core whose effects are still queued: every effect is accounted for")
  func releaseWithQueuedEffects() async throws {
    let clock = ManualClock()
    var core: Core<[Action], Action>? = makeCore(clock: clock)
    let effects = try await core!.dispatch(contentsOf: Array(repeating: .start, count: 1_000))
    weak let released = core
    core = nil  // most of the 1,000 jobs have not started yet
    try await effects.finish()
    #expect(released == nil)
    #expect(clock.sleeperCount == 0)
  }
}
