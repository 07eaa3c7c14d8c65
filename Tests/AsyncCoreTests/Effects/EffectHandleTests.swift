import AsyncCoreTesting
import Testing

@testable import AsyncCore

/// `EffectHandle.cancel()` and `finish()` that tells "finished"
/// from "gave up".
@Suite("EffectHandle", .hangDetector)
struct EffectHandleTests {
  enum Action: Sendable, Equatable {
    /// An effect that sleeps an hour, then records `name`.
    case sleep(String)
    /// An effect that sends `.sleep(name)` (a follow-up in the same
    /// lineage), then sleeps an hour.
    case chain(String)
    case woke(String)
  }

  static func makeCore(clock: ManualClock) -> Core<[String], Action> {
    Core(initialState: [], clock: clock) { log, action in
      switch action {
      case .sleep(let name):
        return .run { send in
          try await send.clock.sleep(for: .seconds(3_600))
          await send(.woke(name))
        }
      case .chain(let name):
        return .run { send in
          await send(.sleep(name + "'s follow-up"))
          try await send.clock.sleep(for: .seconds(3_600))
          await send(.woke(name))
        }
      case .woke(let name):
        log.append(name)
        return .none
      }
    }
  }

  @Test("cancel() cancels the dispatch's effects and leaves other dispatches' effects running")
  func cancelsItsOwn() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock)
    let mine = try await core.dispatch(.sleep("mine"))
    let other = try await core.dispatch(.sleep("other"))
    try await clock.waitForSleepers(atLeast: 2)
    mine.cancel()
    try await mine.finish()
    #expect(mine.isFinished)
    #expect(!other.isFinished)
    #expect(core.metrics.effectsInFlight == 1)
    await clock.advance(by: .seconds(3_600))
    try await other.finish()
    #expect(await core.state == ["other"])
  }

  @Test("cancel() reaches the effects started by actions its effects sent (the lineage)")
  func cancelsTheLineage() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock)
    let chain = try await core.dispatch(.chain("chain"))
    try await clock.waitForSleepers(atLeast: 2)  // the chain and its follow-up's effect
    #expect(core.metrics.effectsInFlight == 2)
    chain.cancel()
    try await chain.finish()
    #expect(core.metrics.effectsInFlight == 0)
    #expect(clock.sleeperCount == 0)
    chain.cancel()  // again, after everything ended: nothing to do
    #expect(chain.isFinished)
  }

  @Test("an effect registered in a cancelled lineage is registered cancelled: it never starts")
  func registeredAfterCancel() throws {
    let registry = EffectRegistry(lifecycle: Lifecycle())
    let lineage = Lineage(registry: registry)
    let before = try #require(registry.register(ids: [], lineage: lineage))
    lineage.cancel()
    let after = try #require(registry.register(ids: [], lineage: lineage))
    #expect(!registry.isLive(before))
    #expect(!registry.isLive(after))
    #expect(registry.finish(before, lineage: lineage))
    #expect(registry.finish(after, lineage: lineage))
    #expect(lineage.isZero)
  }

  @Test("cancel() from inside one of its effects cancels that effect too: what it sends is refused")
  func cancelFromInside() async throws {
    let handle = Box<EffectHandle?>(nil)
    let sent = Signal<(cancelled: Bool, result: SendResult)>()
    let started = Gate()
    let core = Core<Int, Int>(initialState: 0) { state, action in
      state += action
      guard action == 1 else { return .none }
      return .run { send in
        await started.wait()
        handle.value?.cancel()
        sent.emit((Task.isCancelled, await send(10)))
      }
    }
    handle.set(try await core.dispatch(1))
    started.open()
    let result = try #require(await sent.next())
    #expect(result.cancelled)
    #expect(result.result == .effectCancelled)
    try await handle.value?.finish()
    #expect(await core.state == 1)
  }

  @Test("finish() throws CancellationError when the waiting task is cancelled before the effects end")
  func finishGivesUp() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock)
    let handle = try await core.dispatch(.sleep("a"))
    try await clock.waitForSleepers(atLeast: 1)
    let waiter = Task { try await handle.finish() }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(!handle.isFinished)  // the effect goes on: only the wait was given up
    await clock.advance(by: .seconds(3_600))
    try await handle.finish()
    #expect(await core.state == ["a"])
  }

  @Test("finish() returns, not throws, for finished effects even when the waiting task is cancelled")
  func finishedWinsOverCancelled() async throws {
    let core = Core<Int, Int>(initialState: 0) { state, action in
      state += action
      return .run { _ in }
    }
    let handle = try await core.dispatch(1)
    try await handle.finish()
    let waiter = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await handle.finish()
      return Task.isCancelled
    }
    #expect(try await waiter.value)
    let none = try await core.dispatch(contentsOf: [Int]())  // started nothing
    try await none.finish()
  }

  @Test("cancel() races shutdown(.immediate): both end, and every effect has ended", arguments: 0..<20)
  func cancelRacesShutdown(round: Int) async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock)
    let chain = try await core.dispatch(.chain("c"))
    try await clock.waitForSleepers(atLeast: round % 2 + 1)
    async let cancelled: Void = chain.cancel()
    async let stopped: Void = core.shutdown(.immediate)
    _ = await (cancelled, stopped)
    try await chain.finish()
    #expect(core.metrics.effectsInFlight == 0)
  }
}
