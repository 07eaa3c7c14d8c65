import AsyncCore
import AsyncCoreTesting
import Testing

/// Issue 7's new API: `run()` throws `CoreError.alreadyRunning`, and
/// `states(removeDuplicates:buffering:)`. These do not compile against the
/// API before issue 7, which is why they live apart from the other tests.
@Suite("Issue 7's new API", .hangDetector)
struct NewAPITests {
  enum Service {
    @TaskLocal static var name: String?
  }

  enum Action: Sendable, Equatable {
    /// Runs an effect that reports which `run()` it runs under.
    case probe
    case servedBy(String?)
  }

  static func makeProbeCore() -> Core<[String?], Action> {
    Core(initialState: []) { log, action in
      switch action {
      case .probe:
        return .run { send in await send(.servedBy(Service.name)) }
      case .servedBy(let name):
        log.append(name)
        return .none
      }
    }
  }

  // MARK: - Item 14: a second concurrent run() throws

  @Test("a second concurrent run() throws CoreError.alreadyRunning; the first goes on")
  func secondRunThrows() async throws {
    let core = Self.makeProbeCore()
    // Task.immediate runs up to run()'s first suspension, by which time run()
    // consumes the core's effects.
    let service = Task.immediate {
      try await Service.$name.withValue("first") { try await core.run() }
    }
    await #expect(throws: CoreError.alreadyRunning) {
      try await Service.$name.withValue("second") { try await core.run() }
    }
    #expect(!core.hasShutDown)
    try await core.dispatch(.probe).finish()
    #expect(await core.state == ["first"])  // effects still run under the first run()
    await core.shutdown()
    try await service.value  // returns without throwing
  }

  @Test("run() on a core that has shut down returns at once without throwing")
  func runAfterShutdown() async throws {
    let core = Self.makeProbeCore()
    await core.shutdown()
    try await core.run()
  }

  // MARK: - Item 1: a cancelled run() after a graceful shutdown from an effect

  @Test("after a graceful shutdown from an effect, cancelling run() cancels the former caller and waits for it")
  func cancelledRunCancelsTheFormerCaller() async throws {
    let clock = ManualClock()
    let events = Events<String>()
    let returned = Signal<Void>()
    let core = ShutdownFromEffectTests.makeFormerCaller(clock: clock, events: events, returned: returned)
    let service = Task.immediate { try await core.run() }
    try await core.dispatch(.call(.shutdown))
    try #require(await returned.next() != nil)
    try await clock.waitForSleepers(atLeast: 1)
    service.cancel()
    try await service.value
    #expect(events.all == ["caller cancelled", "caller ended"])
    #expect(clock.sleeperCount == 0)
  }

  // MARK: - Item 3: states(removeDuplicates:buffering:)

  @Test("states(removeDuplicates:buffering:) takes a comparison; { _, _ in false } opts out of deduplication")
  func statesRemoveDuplicates() async throws {
    let core = makeCounterCore()
    let everyPublication = collect(await core.states(removeDuplicates: { _, _ in false }, buffering: .all))
    let byCount = collect(await core.states(removeDuplicates: { $0.count == $1.count }, buffering: .all))
    let everyCount = collect(await core.observe(\.count, removeDuplicates: { _, _ in false }, buffering: .all))
    try await core.dispatch(.setLabel(""))  // publishes an equal state
    try await core.dispatch(.setLabel("x"))
    try await core.dispatch(.increment)
    await core.shutdown()
    #expect(await everyPublication.value.map(\.label) == ["", "", "x", "x"])
    #expect(await byCount.value.map(\.count) == [0, 1])
    #expect(await everyCount.value == [0, 0, 0, 1])
  }
}
