import AsyncCore
import AsyncCoreTesting
import Testing

/// An effect that calls `shutdown()` (either mode) or
/// `waitUntilIdle()` on its own core does not wait for itself, nor for the
/// effects it is nested in, and nothing hangs.
///
/// Every wait on the calling effect goes through a `Signal`, which is
/// cancellable: a call that never returns fails the test at its time limit.
@Suite("Shutdown and waitUntilIdle from inside an effect", .hangDetector)
struct ShutdownFromEffectTests {
  enum Call: Sendable, Hashable {
    case shutdown
    case shutdownImmediately
    case waitUntilIdle
  }

  enum Action: Sendable, Equatable {
    /// Runs the other effect, the one the calling effect must wait for.
    case startOther
    /// Runs an effect that makes `Call` on its own core.
    case call(Call)
    case otherDone
    case late
    case outside
  }

  typealias CallingCore = Core<[Action], Action>

  /// Where the call is made from.
  enum Placement: String, CaseIterable, Sendable {
    /// The `.run` effect itself.
    case direct
    /// A `.cancellable` part of a `.concatenate`: two effects it is nested in.
    case nested
    /// A `Task {}` the effect starts and awaits.
    case unstructuredTask

    func effect(_ body: @escaping @Sendable (Send<Action>) async -> Void) -> Effect<Action> {
      switch self {
      case .direct:
        return .run { send in await body(send) }
      case .nested:
        return .concatenate([
          .run { _ in },
          Effect.run { send in await body(send) }.cancellable(id: "nested"),
        ])
      case .unstructuredTask:
        return .run { send in await Task { await body(send) }.value }
      }
    }
  }

  /// What the calling effect saw once its call returned.
  struct Report: Sendable, Equatable {
    var state: [Action]
    var isCancelled: Bool
    var lateSend: SendResult
    var observerCount: Int
  }

  /// `.startOther` runs `other`; `.call` runs `call` with the core itself,
  /// from where `placement` says; the other actions are logged.
  static func makeCore(
    clock: ManualClock,
    placement: Placement = .direct,
    other: @escaping @Sendable (Send<Action>) async throws -> Void = { _ in },
    call: @escaping @Sendable (Call, CallingCore, Send<Action>) async -> Void
  ) -> CallingCore {
    let reference = WeakBox<CallingCore>()
    let core = CallingCore(initialState: [], clock: clock) { log, action in
      switch action {
      case .startOther:
        return .run(operation: other)
      case .call(let made):
        return placement.effect { send in
          guard let core = reference.object else { return }
          await call(made, core, send)
        }
      case .otherDone, .late, .outside:
        log.append(action)
        return .none
      }
    }
    reference.set(core)
    return core
  }

  /// A core whose calling effect makes its call, says it returned, then
  /// goes on: it sleeps an hour of `clock` time and records how it ended.
  static func makeFormerCaller(clock: ManualClock, events: Events<String>, returned: Signal<Void>) -> CallingCore {
    makeCore(clock: clock) { call, core, send in
      await perform(call, on: core)
      returned.emit()
      do {
        try await send.clock.sleep(for: .seconds(3_600))  // goes on after its own call returned
        events.record("caller woke")
      } catch {
        events.record("caller cancelled")
      }
      events.record("caller ended")
    }
  }

  static func perform(_ call: Call, on core: CallingCore) async {
    switch call {
    case .shutdown: await core.shutdown()
    case .shutdownImmediately: await core.shutdown(.immediate)
    // Cancelled only by the test's time limit, which fails the test anyway.
    case .waitUntilIdle: try? await core.waitUntilIdle()
    }
  }

  /// Reads, in the calling effect, what it can see once its call returned.
  static func report(from core: CallingCore, send: Send<Action>) async -> Report {
    let isCancelled = Task.isCancelled
    let state = await core.state
    let observerCount = core.metrics.observers
    let lateSend = await send(.late)
    return Report(
      state: state,
      isCancelled: isCancelled,
      lateSend: lateSend,
      observerCount: observerCount
    )
  }

  /// Sleeps one second of clock time, then sends `.otherDone`.
  static let sleepThenFinish: @Sendable (Send<Action>) async throws -> Void = { send in
    try await send.clock.sleep(for: .seconds(1))
    await send(.otherDone)
  }

  @Test(
    "graceful shutdown from an effect: outside refused at once, the others finish, observers end, the caller goes on",
    arguments: Placement.allCases
  )
  func gracefulFromInside(placement: Placement) async throws {
    let clock = ManualClock()
    let reports = Signal<Report>()
    let core = Self.makeCore(clock: clock, placement: placement, other: Self.sleepThenFinish) { call, core, send in
      await Self.perform(call, on: core)
      reports.emit(await Self.report(from: core, send: send))
    }
    let observer = await core.observe(\.count)  // held, never iterated: counted until the core ends it
    try await core.dispatch(.startOther)
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.call(.shutdown))
    // The call has begun once the core refuses outside actions.
    try #require(await yieldUntil { core.hasShutDown })
    #expect(core.send(.outside) == .shutDown)
    await #expect(throws: CoreError.shutDown) { try await core.dispatch(.outside) }
    #expect(clock.sleeperCount == 1)  // the other effect is not cancelled
    await clock.advance(by: .seconds(1))
    let report = try #require(await reports.next())
    // The other effect's follow-up was reduced, observers ended, the caller
    // was not cancelled, and what it sends now is refused.
    #expect(report == Report(state: [.otherDone], isCancelled: false, lateSend: .shutDown, observerCount: 0))
    await core.shutdown()  // from outside: waits for the caller, which ends after its report
    #expect(await core.state == [.otherDone])
    withExtendedLifetime(observer) {}
  }

  @Test(
    "immediate shutdown from an effect cancels every effect, the caller too, and waits for the others",
    arguments: [Placement.direct, .nested]
  )
  func immediateFromInside(placement: Placement) async throws {
    let clock = ManualClock()
    let events = Events<String>()
    let otherCancelled = Signal<Void>()
    let letOtherEnd = Gate()
    defer { letOtherEnd.open() }
    let reports = Signal<Report>()
    let cancelledThenWait: @Sendable (Send<Action>) async throws -> Void = { send in
      do {
        try await send.clock.sleep(for: .seconds(3_600))
      } catch {
        events.record("other cancelled")
        otherCancelled.emit()
        await letOtherEnd.wait()  // ends only when the test says so
        events.record("other ended")
      }
    }
    let core = Self.makeCore(clock: clock, placement: placement, other: cancelledThenWait) { call, core, send in
      await Self.perform(call, on: core)
      events.record("call returned")
      reports.emit(await Self.report(from: core, send: send))
    }
    let observer = await core.observe(\.count)
    try await core.dispatch(.startOther)
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.call(.shutdownImmediately))
    try #require(await otherCancelled.next() != nil)
    #expect(core.send(.outside) == .shutDown)
    #expect(events.all == ["other cancelled"])  // the call is still waiting for the other effect
    letOtherEnd.open()
    let report = try #require(await reports.next())
    #expect(events.all == ["other cancelled", "other ended", "call returned"])
    #expect(report == Report(state: [], isCancelled: true, lateSend: .shutDown, observerCount: 0))
    await core.shutdown()
    #expect(await core.state == [])
    withExtendedLifetime(observer) {}
  }

  @Test(
    "waitUntilIdle from an effect returns once the mailbox is empty and every other effect has ended",
    arguments: Placement.allCases
  )
  func waitUntilIdleFromInside(placement: Placement) async throws {
    let clock = ManualClock()
    let reports = Signal<Report>()
    let core = Self.makeCore(clock: clock, placement: placement, other: Self.sleepThenFinish) { call, core, send in
      await Self.perform(call, on: core)
      reports.emit(await Self.report(from: core, send: send))
    }
    let observer = await core.observe(\.count)
    try await core.dispatch(.startOther)
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.call(.waitUntilIdle))
    await clock.advance(by: .seconds(1))
    let report = try #require(await reports.next())
    // The other effect's follow-up was reduced before the wait returned; the
    // core still runs, so the caller's own send is accepted.
    #expect(report == Report(state: [.otherDone], isCancelled: false, lateSend: .accepted, observerCount: 1))
    await core.shutdown()
    #expect(await core.state == [.otherDone, .late])
    withExtendedLifetime(observer) {}
  }

  @Test("effects waiting for idle or shutting down at the same time do not wait for each other")
  func concurrentCallersFromInside() async throws {
    let clock = ManualClock()
    let bothRunning = Barrier(parties: 2)
    let returned = Signal<Call>()
    let core = Self.makeCore(clock: clock) { call, core, _ in
      await bothRunning.arriveAndWait()  // both effects are running before either calls
      await Self.perform(call, on: core)
      returned.emit(call)
    }
    try await core.dispatch(.call(.waitUntilIdle))
    try await core.dispatch(.call(.shutdown))
    let first = try #require(await returned.next())
    let second = try #require(await returned.next())
    #expect(Set([first, second]) == [.waitUntilIdle, .shutdown])
    #expect(core.hasShutDown)
    await core.shutdown()
  }

  @Test("after a graceful shutdown from an effect, an outside shutdown(.immediate) cancels the former caller")
  func laterImmediateShutdownCancelsTheCaller() async throws {
    let clock = ManualClock()
    let events = Events<String>()
    let returned = Signal<Void>()
    let core = Self.makeFormerCaller(clock: clock, events: events, returned: returned)
    try await core.dispatch(.call(.shutdown))
    try #require(await returned.next() != nil)
    try await clock.waitForSleepers(atLeast: 1)
    await core.shutdown(.immediate)
    // Returned only once the former caller had ended.
    #expect(events.all == ["caller cancelled", "caller ended"])
    #expect(clock.sleeperCount == 0)
  }

  @Test("after a graceful shutdown from an effect, an outside graceful shutdown waits for the former caller")
  func laterGracefulShutdownWaitsForTheCaller() async throws {
    let clock = ManualClock()
    let events = Events<String>()
    let returned = Signal<Void>()
    let core = Self.makeCore(clock: clock) { call, core, send in
      await Self.perform(call, on: core)
      returned.emit()
      do {
        try await send.clock.sleep(for: .seconds(1))
        events.record("caller ended")
      } catch {
        events.record("caller cancelled")
      }
    }
    try await core.dispatch(.call(.shutdown))
    try #require(await returned.next() != nil)
    try await clock.waitForSleepers(atLeast: 1)
    let outside = Task.immediate {
      await core.shutdown()
      events.record("outside returned")
    }
    #expect(events.all.isEmpty)  // the former caller is asleep, so the outside call waits
    await clock.advance(by: .seconds(1))
    await outside.value
    #expect(events.all == ["caller ended", "outside returned"])
  }

  @Test("after a graceful shutdown from an effect, cancelling run() cancels the former caller and waits for it")
  func cancelledRunCancelsTheFormerCaller() async throws {
    let clock = ManualClock()
    let events = Events<String>()
    let returned = Signal<Void>()
    let core = Self.makeFormerCaller(clock: clock, events: events, returned: returned)
    let service = Task.immediate { try await core.run() }
    try await core.dispatch(.call(.shutdown))
    try #require(await returned.next() != nil)
    try await clock.waitForSleepers(atLeast: 1)
    service.cancel()
    try await service.value
    #expect(events.all == ["caller cancelled", "caller ended"])
    #expect(clock.sleeperCount == 0)
  }
}
