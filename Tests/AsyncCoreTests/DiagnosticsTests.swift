import AsyncCore
import Testing

/// Issue 7, item 11: effects a reducer returns once the core refuses new
/// effects are not run, and are reported to the diagnostics handler.
@Suite("Diagnostics for refused effects", .hangDetector)
struct DiagnosticsTests {
  enum Action: Sendable, Equatable {
    /// Holds the core: its reducer blocks until the test opens the gate.
    case hold
    /// Returns a `.run` effect and a `.send(.loaded)`.
    case load
    case loaded
  }

  @Test("a .run returned by an action reduced after shutdown(.immediate) began is reported as CoreError.shutDown")
  func refusedEffectIsReported() async throws {
    let failures = Events<EffectFailure>()
    let ran = Events<String>()
    let holding = Signal<Void>()
    let release = Gate()
    defer { release.open() }  // never leave the core's thread blocked
    let runLine = Box(UInt(0))
    let reducer: Core<[Action], Action>.Reducer = { log, action in
      log.append(action)
      switch action {
      case .hold:
        holding.emit()
        _ = release.spinUntilOpen()
        return .none
      case .load:
        runLine.set(#line + 1)
        let work = Effect<Action>.run { _ in ran.record("the refused effect ran") }
        return .merge(.send(.loaded), work)
      case .loaded:
        return .none
      }
    }
    let core = Core(initialState: [], diagnostics: { failures.record($0) }, reducer: reducer)

    // `.hold` is reduced by the task that drains `send`s, which the reducer
    // then keeps busy: `.load`, accepted now, waits in the mailbox.
    core.send(.hold)
    try #require(await holding.next() != nil)
    #expect(core.send(.load))
    // Task.immediate runs the call up to its first suspension: the shutdown
    // has begun (and waits for the core) before the reducer is let go, so
    // `.load` is reduced after it began, once effects are refused.
    let stopping = Task.immediate { await core.shutdown(.immediate) }
    #expect(core.hasShutDown)
    release.open()
    await stopping.value

    #expect(ran.all.isEmpty)  // not run
    // The `.send` is never refused: reduced with the action.
    #expect(await core.state == [.hold, .load, .loaded])
    #expect(failures.all.count == 1)
    let failure = try #require(failures.all.first)
    #expect(failure.error as? CoreError == .shutDown)
    #expect(failure.isRefusal)
    #expect(failure.description.contains("was not started: the core is shutting down"))
    #expect(!failure.description.contains("threw"))
    #expect("\(failure.fileID)" == "AsyncCoreTests/DiagnosticsTests.swift")
    #expect(failure.line == runLine.value)
  }

  @Test("an effect that ran and threw CoreError.shutDown itself is a failure, not a refusal")
  func thrownShutDownIsNotARefusal() async throws {
    let failures = Events<EffectFailure>()
    let stopped = Core<Int, Int>(initialState: 0) { state, action in state += action }
    await stopped.shutdown()
    let reducer: Core<Int, Int>.Reducer = { _, _ in .run { _ in try await stopped.dispatch(1) } }
    let core = Core(initialState: 0, diagnostics: { failures.record($0) }, reducer: reducer)
    try await core.dispatch(1).finish()
    let failure = try #require(failures.all.first)
    #expect(failure.error as? CoreError == .shutDown)
    #expect(!failure.isRefusal)
    #expect(failure.description.contains("threw"))
  }
}
