import AsyncCore
import AsyncCoreTesting
import Testing

@testable import AsyncCore

/// The effect registry's waits and cancellation, reached through
/// `@testable import` where the public API cannot make the timing exact.
@Suite("Effect registry waits", .hangDetector)
struct EffectRegistryTests {
  @Test("cancelling an effect that is parked in a wait for the effects ends the wait (no recursive lock)")
  func cancellingAParkedWaiter() async throws {
    let registry = EffectRegistry(lifecycle: Lifecycle())
    let other = try #require(registry.register(ids: [], lineage: nil))  // keeps the registry busy
    let waiter = try #require(registry.register(ids: [CancelID(1)], lineage: nil))
    // Task.immediate runs up to its first suspension: the effect's task is
    // registered and parked in the wait when this returns.
    let waiting = Task.immediate {
      await withUnsafeCurrentTask { task in
        let job = EffectJob(token: waiter, registry: registry, lineage: nil, priority: nil) { _ in }
        guard let task, registry.start(waiter, job: job, task: task) else { return }
        await registry.waitUntilSettled(fromInside: false, cancellable: true)
        _ = registry.finish(waiter, lineage: nil)
      }
      return Task.isCancelled
    }
    // Cancels the waiter's task under the registry's lock; its cancellation
    // handler must not take that lock again.
    registry.cancel(id: CancelID(1), sparing: [])
    #expect(await waiting.value)
    #expect(!registry.isSettled(fromInside: false))
    #expect(registry.finish(other, lineage: nil))
    #expect(registry.isSettled(fromInside: false))
  }
}

/// What a clock driven by a test learns about effects (`EffectObservation`),
/// served by the registry from what it keeps for every effect anyway.
@Suite("Effect observation", .hangDetector)
struct EffectObservationTests {
  typealias Work = @Sendable (EffectJob) async -> Void

  static func job(_ token: Int, of registry: EffectRegistry, work: @escaping Work = { _ in }) -> EffectJob {
    EffectJob(token: token, registry: registry, lineage: nil, priority: nil, work: work)
  }

  @Test("effects are in the order they were registered, across cores; a task outside them takes its place when it asks")
  func startOrderAcrossRegistries() throws {
    let (one, other) = (EffectRegistry(lifecycle: Lifecycle()), EffectRegistry(lifecycle: Lifecycle()))
    let first = Self.job(try #require(one.register(ids: [], lineage: nil)), of: one)
    let second = Self.job(try #require(other.register(ids: [], lineage: nil)), of: other)
    let outside = EffectObservation.nextStartOrder()
    let third = Self.job(try #require(one.register(ids: [], lineage: nil)), of: one)
    #expect(first.startOrder < second.startOrder)
    #expect(second.startOrder < outside)
    #expect(outside < third.startOrder)
  }

  @Test("the current effect is the one the task runs in, and the Task {} it starts; none outside effects")
  func currentEffect() async throws {
    let registry = EffectRegistry(lifecycle: Lifecycle())
    let seen = Events<Bool>()
    let job = Self.job(try #require(registry.register(ids: [], lineage: nil)), of: registry) { job in
      seen.record(EffectObservation.current === job)
      await Task { seen.record(EffectObservation.current === job) }.value
    }
    await job.run()
    #expect(seen.all == [true, true])
    #expect(EffectObservation.current == nil)
  }

  @Test("an end observer is told once, after the core counts the effect no more; a finished effect refuses one")
  func endObserver() async throws {
    let registry = EffectRegistry(lifecycle: Lifecycle())
    let gate = Gate()
    let started = Signal<Void>()
    let job = Self.job(try #require(registry.register(ids: [], lineage: nil)), of: registry) { _ in
      started.emit()
      await gate.wait()
    }
    #expect(!job.observeEnd {})  // not started: no task to follow
    let running = Task { await job.run() }
    try #require(await started.next() != nil)
    let inFlightWhenTold = Events<Int>()
    #expect(job.observeEnd { inFlightWhenTold.record(registry.inFlight) })
    #expect(inFlightWhenTold.all.isEmpty)
    gate.open()
    await running.value
    #expect(inFlightWhenTold.all == [0])
    #expect(!job.observeEnd {})
    #expect(registry.isSettled(fromInside: false))
  }

  @Test("an observed effect cancelled while it runs ends once it returns, and its observer is told once")
  func observedAndCancelled() async throws {
    let registry = EffectRegistry(lifecycle: Lifecycle())
    let gate = Gate()
    let started = Signal<Void>()
    let job = Self.job(try #require(registry.register(ids: [CancelID(1)], lineage: nil)), of: registry) { _ in
      started.emit()
      await gate.wait()  // ignores cancellation
    }
    let running = Task { await job.run() }
    try #require(await started.next() != nil)
    let told = Events<Int>()
    #expect(job.observeEnd { told.record(registry.inFlight) })
    registry.cancel(id: CancelID(1), sparing: [])
    #expect(told.all.isEmpty)
    gate.open()
    await running.value
    #expect(told.all == [0])
  }
}

/// A wait from outside the core's
/// effects returns only once every effect has ended, also while an effect
/// is itself waiting on the core from inside.
@Suite("Outside waits and inside waits together", .hangDetector)
struct InsideAndOutsideWaitTests {
  enum Action: Sendable, Equatable {
    case sleeper, waiter
    case done(String)
  }

  enum Call: String, CaseIterable, Sendable {
    case waitUntilIdle, shutdown, shutdownImmediately
  }

  @Test("an outside call never returns while an effect that waited inside is still running", arguments: Call.allCases)
  func outsideWaitsForTheInsideWaiter(call: Call) async throws {
    for _ in 0..<20 {
      let clock = ManualClock()
      let weak = WeakBox<Core<[Action], Action>>()
      let ended = Box(false)
      let entered = Signal<Void>()
      let core = Core<[Action], Action>(initialState: [], clock: clock) { log, action in
        switch action {
        case .sleeper:
          return .run { _ in try await clock.sleep(for: .seconds(1)) }
        case .waiter:
          return .run { _ in
            entered.emit()
            // Returns, or throws when `shutdown(.immediate)` cancels the
            // wait: either way the effect goes on running after it.
            try? await weak.object?.waitUntilIdle()
            // Still running after its inside wait returned.
            for _ in 0..<200 { await Task.yield() }
            ended.set(true)
          }
        case .done(let who):
          log.append(.done(who))
          return .none
        }
      }
      weak.set(core)
      try await core.dispatch(.sleeper)
      try await clock.waitForSleepers(atLeast: 1)
      try await core.dispatch(.waiter)
      try #require(await entered.next() != nil)  // started: not cancelled unstarted
      let outside = Task {
        switch call {
        case .waitUntilIdle: try await core.waitUntilIdle()
        case .shutdown: await core.shutdown()
        case .shutdownImmediately: await core.shutdown(.immediate)
        }
        return ended.value
      }
      await clock.advance(by: .seconds(1))  // the sleeper ends: the inside wait returns
      #expect(try await outside.value, "the outside \(call) returned while the inner effect ran")
      await core.shutdown(.immediate)
    }
  }
}
