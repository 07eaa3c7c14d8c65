import Testing

@testable import AsyncCore

/// Effects a reducer returns once the core refuses new
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

  @Test("a .run returned by an action reduced after shutdown(.immediate) began is reported as an effect refused")
  func refusedEffectIsReported() async throws {
    let failures = Events<EffectFailure>()
    let ran = Events<String>()
    let holding = Signal<Void>()
    let release = Gate()
    defer { release.open() }  // never leave the core's thread blocked
    let runLine = Box(UInt(0))
    let reducer = Reduce<[Action], Action> { log, action in
      log.append(action)
      switch action {
      case .hold:
        holding.emit()
        _ = release.spinUntilOpen()
        return .none
      case .load:
        runLine.set(#line + 1)
        let work = Effect<Action>.run { _ in ran.record("the refused effect ran") }
        return .merge([.send(.loaded), work])
      case .loaded:
        return .none
      }
    }
    let core = Core(initialState: [], diagnostics: { failures.record($0) }, reducer: reducer)

    // `.hold` is reduced by the task that drains `send`s, which the reducer
    // then keeps busy: `.load`, accepted now, waits in the mailbox.
    core.send(.hold)
    try #require(await holding.next() != nil)
    #expect(core.send(.load) == .accepted)
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
    guard case .effectRefused? = failure.error as? CoreDiagnostic else {
      Issue.record("not reported as an effect refused: \(failure.error)")
      return
    }
    #expect(
      failure.description
        == "AsyncCore: the effect made at AsyncCoreTests/DiagnosticsTests.swift:\(runLine.value) was not started: "
        + "the core is shutting down")
    #expect("\(failure.fileID)" == "AsyncCoreTests/DiagnosticsTests.swift")
    #expect(failure.line == runLine.value)
  }

  @Test("an effect that ran and threw CoreError.shutDown itself is a failure, not a refusal")
  func thrownShutDownIsNotARefusal() async throws {
    let failures = Events<EffectFailure>()
    let stopped = Core<Int, Int>(initialState: 0, reducer: Reduce { state, action in state += action })
    await stopped.shutdown()
    let reducer = Reduce<Int, Int> { _, _ in .run { _ in try await stopped.dispatch(1) } }
    let core = Core(initialState: 0, diagnostics: { failures.record($0) }, reducer: reducer)
    try await core.dispatch(1).finish()
    let failure = try #require(failures.all.first)
    #expect(failure.error as? CoreError == .shutDown)
    #expect(failure.description.contains("threw"))
  }
}

/// An effect's `send` after the effect ended or was cancelled is refused
/// (it returns `false`) and reported to the diagnostics handler, once per
/// effect, naming both actions and where the effect was made.
@Suite("Diagnostics for sends refused after an effect ended", .hangDetector)
struct SendRefusedTests {
  enum Action: Sendable, Equatable {
    /// Starts an effect that keeps its `Send` in `kept` and returns.
    case keep
    /// Starts an effect that hands its `Send` to a `Task {}` that sends once
    /// the test opens the gate.
    case escape
    /// Starts a cancellable effect that waits until cancelled, then sends
    /// `.late` and `.later`.
    case wait
    /// `.keep`, as the second part of a `.concatenate` (an effect made of
    /// parts: reported at the place of the `.run` whose `Send` it was).
    case keepInSequence
    /// Starts an effect that sends `.late` and `.later` and returns.
    case sendTwice
    /// A `.concatenate` whose first `.run` keeps its `Send`, and whose
    /// second sends through it, while the concatenate still runs.
    case sendThroughAnEndedPart
    /// A `.concatenate` of two `.run`s that each keep their `Send` (in
    /// `kept` and `keptSecond`).
    case keepInEachPart
    case late
    case later
  }

  struct WaitID: Hashable, Sendable {}

  /// A core whose effects report to `failures`; `line` receives the line
  /// of the `.run` that made each effect.
  final class Fixture: Sendable {
    let failures = Events<EffectFailure>()
    let kept = Box<Send<Action>?>(nil)
    let keptSecond = Box<Send<Action>?>(nil)
    let gate = Gate()
    let started = Signal<Void>()
    let results = Signal<[SendResult]>()
    let runLine = Box(UInt(0))
    let reduced = Events<Action>()
    // Never finished: iterating it ends only when the waiting task is cancelled.
    let (forever, foreverContinuation) = AsyncStream<Void>.makeStream()

    func makeCore() -> Core<Int, Action> {
      let failures = self.failures
      let reducer = Reduce<Int, Action> { return self.reduce(&$0, $1) }
      return Core(initialState: 0, diagnostics: { failures.record($0) }, reducer: reducer)
    }

    func reduce(_ state: inout Int, _ action: Action) -> Effect<Action> {
      self.reduced.record(action)
      switch action {
      case .keep:
        self.runLine.set(#line + 1)
        return .run { send in self.kept.set(send) }
      case .escape:
        self.runLine.set(#line + 1)
        return .run { send in
          Task {
            await self.gate.wait()
            self.results.emit([await send(.late)])
          }
        }
      case .wait:
        self.runLine.set(#line + 1)
        return .run { send in
          self.started.emit()
          for await _ in self.forever {}
          self.results.emit([await send(.late), await send(.later)])
        }
        .cancellable(id: WaitID())
      case .keepInSequence:
        self.runLine.set(#line + 3)
        return .concatenate([
          .run { _ in },
          .run { send in self.kept.set(send) },
        ])
      case .sendThroughAnEndedPart:
        self.runLine.set(#line + 2)
        return .concatenate([
          .run { send in self.kept.set(send) },
          .run { _ in
            guard let first = self.kept.value else { return }
            self.results.emit([await first(.late), await first(.later)])
          },
        ])
      case .keepInEachPart:
        self.runLine.set(#line + 2)
        return .concatenate([
          .run { send in self.kept.set(send) },
          .run { send in self.keptSecond.set(send) },
        ])
      case .sendTwice:
        return .run { send in self.results.emit([await send(.late), await send(.later)]) }
      case .late, .later:
        state += 1
        return .none
      }
    }

    /// The one refusal reported, checked against what it must say.
    func expectOneRefusal(
      of action: Action, startedBy origin: Action, reason: CoreDiagnostic.RefusalReason, saying phrase: String,
      sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
      #expect(failures.all.count == 1, "reported \(failures.all.count) times", sourceLocation: sourceLocation)
      let failure = try #require(failures.all.first, sourceLocation: sourceLocation)
      guard case .sendRefused(let refused, let startedBy, let why)? = failure.error as? CoreDiagnostic else {
        Issue.record("not a refused send: \(failure.error)", sourceLocation: sourceLocation)
        return
      }
      #expect(refused as? Action == action, sourceLocation: sourceLocation)
      #expect(startedBy as? Action == origin, sourceLocation: sourceLocation)
      #expect(why == reason, sourceLocation: sourceLocation)
      #expect("\(failure.fileID)" == "AsyncCoreTests/DiagnosticsTests.swift", sourceLocation: sourceLocation)
      #expect(failure.line == runLine.value, sourceLocation: sourceLocation)
      let text = failure.description
      #expect(
        text == "AsyncCore: the effect of \(origin) sent \(action) \(phrase); it was not reduced "
          + "(the effect made at AsyncCoreTests/DiagnosticsTests.swift:\(runLine.value))",
        sourceLocation: sourceLocation)
    }
  }

  static let afterEnding = "after it ended (a Send is valid only while its effect runs)"

  @Test(
    "a Send kept past its effect is refused, and reported once, naming both actions and the effect's place",
    arguments: [Action.keep, .keepInSequence])
  func keptSendAfterTheEffectEnded(start: Action) async throws {
    let fixture = Fixture()
    let core = fixture.makeCore()
    // The kept `Send` holds its effect, whose closure holds the fixture:
    // let go of it, or the two keep each other alive.
    defer { fixture.kept.set(nil) }
    try await core.dispatch(start).finish()
    let send = try #require(fixture.kept.value)
    #expect(await send(.late) == .effectEnded)
    #expect(await send(.later) == .effectEnded)
    #expect(await core.state == 0)
    try fixture.expectOneRefusal(of: .late, startedBy: start, reason: .effectEnded, saying: Self.afterEnding)
  }

  @Test("a Send escaped into a Task {} that sends after the effect ended is refused and reported")
  func escapedIntoATask() async throws {
    let fixture = Fixture()
    let core = fixture.makeCore()
    try await core.dispatch(.escape).finish()  // the effect has returned; its Task waits at the gate
    fixture.gate.open()
    #expect(await fixture.results.next() == [.effectEnded])
    #expect(await core.state == 0)
    try fixture.expectOneRefusal(of: .late, startedBy: .escape, reason: .effectEnded, saying: Self.afterEnding)
  }

  @Test(
    "an effect cancelled by id that sends afterwards is refused, and reported once for its two sends")
  func sendAfterCancellationByID() async throws {
    let fixture = Fixture()
    let core = fixture.makeCore()
    let handle = try await core.dispatch(.wait)
    try #require(await fixture.started.next() != nil)
    await core.cancelEffects(id: WaitID())
    #expect(await fixture.results.next() == [.effectCancelled, .effectCancelled])
    try await handle.finish()
    #expect(await core.state == 0)
    try fixture.expectOneRefusal(
      of: .late, startedBy: .wait, reason: .effectCancelled, saying: "after it was cancelled")
  }

  @Test("an effect cancelled by shutdown(.immediate) that sends is refused and reported as the core having stopped")
  func sendAfterShutdown() async throws {
    let fixture = Fixture()
    let core = fixture.makeCore()
    _ = try await core.dispatch(.wait)
    try #require(await fixture.started.next() != nil)
    await core.shutdown(.immediate)
    #expect(await fixture.results.next() == [.shutDown, .shutDown])
    try fixture.expectOneRefusal(of: .late, startedBy: .wait, reason: .coreStopped, saying: "after the core shut down")
  }

  @Test("a .concatenate's part has a Send of its own, refused once that part has returned, reported at its place")
  func concatenatedPartEnds() async throws {
    let fixture = Fixture()
    let core = fixture.makeCore()
    // The kept `Send` holds its effect, whose closure holds the fixture:
    // let go of it, or the two keep each other alive.
    defer { fixture.kept.set(nil) }
    try await core.dispatch(.sendThroughAnEndedPart).finish()
    #expect(await fixture.results.next() == [.effectEnded, .effectEnded])
    #expect(await core.state == 0)
    try fixture.expectOneRefusal(
      of: .late, startedBy: .sendThroughAnEndedPart, reason: .effectEnded, saying: Self.afterEnding)
  }

  @Test("each part of a .concatenate reports its own first refused send: a leak in one does not hide another's")
  func concatenatedPartsReportEach() async throws {
    let fixture = Fixture()
    let core = fixture.makeCore()
    defer {
      fixture.kept.set(nil)
      fixture.keptSecond.set(nil)
    }
    try await core.dispatch(.keepInEachPart).finish()
    let first = try #require(fixture.kept.value)
    let second = try #require(fixture.keptSecond.value)
    // The second part first, then the first part twice: two reports, one
    // per part, each at its own `.run`.
    #expect(await second(.late) == .effectEnded)
    #expect(await first(.later) == .effectEnded)
    #expect(await first(.late) == .effectEnded)
    #expect(await core.state == 0)
    let failures = fixture.failures.all
    #expect(failures.map(\.line) == [fixture.runLine.value + 1, fixture.runLine.value])
    let refused = failures.compactMap { failure -> Action? in
      guard case .sendRefused(let action, let startedBy, .effectEnded)? = failure.error as? CoreDiagnostic,
        startedBy as? Action == .keepInEachPart
      else { return nil }
      return action as? Action
    }
    #expect(refused == [.late, .later])
  }

  @Test("an effect whose sends are all accepted reports nothing")
  func acceptedSendsAreNotReported() async throws {
    let fixture = Fixture()
    let core = fixture.makeCore()
    try await core.dispatch(.sendTwice).finish()
    #expect(await fixture.results.next() == [.accepted, .accepted])
    #expect(await core.state == 2)
    #expect(fixture.failures.all.isEmpty)
  }

  @Test("a refusal's description is one line, with each action cut at 200 bytes")
  func descriptionIsBounded() {
    let refused = CoreDiagnostic.sendRefused(
      action: String(repeating: "\u{200D}", count: 100_000), startedBy: String(repeating: "x\n", count: 100_000),
      reason: .effectCancelled)
    let text = refused.description
    #expect(text.utf8.count < 600)
    #expect(!text.contains("\n"))
    #expect(text.hasPrefix("the effect of x\\u{A}x\\u{A}"))
  }
}

/// The one type the core's own reports have, and the line each makes.
@Suite("CoreDiagnostic", .hangDetector)
struct CoreDiagnosticTests {
  enum Action: Sendable {
    case tap(Int)
    case load
  }

  static let place: (fileID: StaticString, line: UInt) = ("App/Feature.swift", 12)

  static func line(for diagnostic: CoreDiagnostic) -> String {
    EffectFailure(error: diagnostic, fileID: place.fileID, line: place.line).description
  }

  @Test("each diagnostic's failure line names the place as what it is: the child, the forEach or the effect")
  func failureLines() {
    #expect(
      Self.line(for: .childNotFound(child: "\\Board.rows[id: 3]", action: Action.tap(3)))
        == "AsyncCore: an action for \\Board.rows[id: 3], which is not in the state, was not reduced: tap(3) "
        + "(the child placed at App/Feature.swift:12)")
    #expect(
      Self.line(for: .duplicateID(id: "3", collection: "\\Board.rows"))
        == "AsyncCore: more than one element of \\Board.rows has the id 3: actions for it reach the first "
        + "(the forEach at App/Feature.swift:12)")
    #expect(
      Self.line(for: .sendRefused(action: Action.tap(1), startedBy: Action.load, reason: .coreStopped))
        == "AsyncCore: the effect of load sent tap(1) after the core shut down; it was not reduced "
        + "(the effect made at App/Feature.swift:12)")
    #expect(
      Self.line(for: .effectRefused)
        == "AsyncCore: the effect made at App/Feature.swift:12 was not started: the core is shutting down")
    // Any other error is one an effect threw.
    #expect(
      EffectFailure(error: CoreError.shutDown, fileID: "App/Feature.swift", line: 12).description
        == "AsyncCore: the effect started at App/Feature.swift:12 threw, and has no catch handler: "
        + "the core has shut down and accepts no more actions")
  }

  @Test("a diagnostic's own description is its sentence without the place, one line with the action cut")
  func descriptionWithoutPlace() {
    #expect(
      CoreDiagnostic.duplicateID(id: "3", collection: "\\Board.rows").description
        == "more than one element of \\Board.rows has the id 3: actions for it reach the first")
    #expect(CoreDiagnostic.effectRefused.description == "an effect was not started: the core is shutting down")
    let long = CoreDiagnostic.childNotFound(child: "\\Board.detail", action: String(repeating: "a\n", count: 10_000))
    #expect(!long.description.contains("\n"))
    #expect(long.description.utf8.count < 400)
  }
}
