import AsyncCore
import Testing

/// `run()` has one caller at a time: a second concurrent caller is refused
/// with `CoreError.alreadyRunning`, and a core that has shut down returns at once.
@Suite("run() callers", .hangDetector)
struct RunTests {
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
}
