import AsyncCoreTestSupport
import AsyncCoreTesting
import Observation
import Synchronization
import Testing

@testable import AsyncCore

/// A core in memory or on a journal: the features a core offers, each run
/// on both, must behave the same.
enum Durability: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case inMemory
  case journaled

  var testDescription: String { rawValue }
}

/// Makes a board core of `durability`; a journaled one's journal is returned too.
func makeBoard(
  _ durability: Durability, _ initialState: Board = Board(), clock: ManualClock = ManualClock(),
  journal: MemoryJournal<Board, BoardAction> = MemoryJournal(), diagnostics: Events<EffectFailure> = Events()
) async throws -> Core<Board, BoardAction> {
  switch durability {
  case .inMemory:
    return BoardFeature.makeCore(initialState, clock: clock, diagnostics: diagnostics)
  case .journaled:
    return try await Core(
      initialState: initialState, journal: journal, dependencies: Dependencies { $0.prefix = "core" }, clock: clock,
      diagnostics: { diagnostics.record($0) }, reducer: BoardFeature.reducer)
  }
}

@Suite("What a core offers, in memory and on a journal", .hangDetector)
struct DurableCoreFeatureTests {
  @Test("scoped handles: dispatch, send, state, observe and subscribe through a child", arguments: Durability.allCases)
  func scopedHandles(durability: Durability) async throws {
    let core = try await makeBoard(durability, Board(rows: [Panel(id: 1)]))
    let left = core.scope(state: \.left, action: BoardAction.leftCase)
    let row = try #require(await core.scope(state: \.rows, id: 1, action: BoardAction.rowCase))
    var counts = await left.observe(\.count).makeAsyncIterator()
    #expect(await counts.next() == 0)
    let seen = Events<Int>()
    let subscriber = await row.subscribe(to: \.count) { seen.record($0) }
    try await left.dispatch(.increment)
    #expect(left.send(.increment) == .accepted)
    try await row.dispatch(.increment)
    #expect(try await left.state.count == 2)
    #expect(await counts.next() == 2)
    #expect(seen.all == [0, 1])
    try await core.dispatch(.removeRow(1))
    #expect(row.isRemoved)
    await #expect(throws: CoreError.childRemoved) { try await row.dispatch(.increment) }
    subscriber.cancel()
    await core.shutdown()
  }

  @Test("child reducers: scope, ifLet and forEach, with their dependencies", arguments: Durability.allCases)
  func childReducers(durability: Durability) async throws {
    let core = try await makeBoard(durability)
    try await core.dispatch(contentsOf: [.showDetail, .addRow(7), .right(.readPrefix), .detail(.increment)])
    try await core.dispatch(.row(id: 7, action: .increment))
    try await core.waitUntilIdle()
    let state = await core.state
    #expect(state.detail?.count == 1)
    #expect(state.rows == [Panel(id: 7, count: 1)])
    #expect(state.right.loaded == ["right"])
    await core.shutdown()
  }

  @Test("middleware sees every action and may replace or drop it", arguments: Durability.allCases)
  func middleware(durability: Durability) async throws {
    let core = try await makeBoard(durability)
    let seen = Events<BoardAction>()
    let id = await core.addMiddleware { action, _, _ in
      seen.record(action)
      switch action {
      case .note("drop"): return .drop
      case .note("swap"): return .replace(with: .note("swapped"))
      default: return .pass
      }
    }
    try await core.dispatch(.note("keep"))
    try await core.dispatch(.note("drop"))
    try await core.dispatch(.note("swap"))
    await core.removeMiddleware(id)
    try await core.dispatch(.note("drop"))
    #expect(await core.state.notes == ["keep", "swapped", "drop"])
    #expect(seen.all == [.note("keep"), .note("drop"), .note("swap")])
    await core.shutdown()
  }

  @Test("record and replay: a recording of a session replays into a fresh core", arguments: Durability.allCases)
  func recordAndReplay(durability: Durability) async throws {
    let clock = ManualClock()
    let core = try await makeBoard(durability, clock: clock)
    let recorder = await core.record(last: 100)
    try await core.dispatch(.addRow(1))
    try await core.dispatch(.row(id: 1, action: .setTitle("one")))
    try await core.dispatch(.right(.readPrefix))
    try await core.waitUntilIdle()
    let recording = await recorder.recording()
    #expect(recording.entries.count == 4)
    #expect(recording.finalState == (await core.state))
    await core.shutdown()

    let fresh = try await makeBoard(durability, recording.initialState)
    try await fresh.replay(recording)
    #expect(await fresh.state == recording.finalState)
    await fresh.shutdown()
  }

  @Test("dependencies: effects read them, and updated ones reach later effects", arguments: Durability.allCases)
  func dependencies(durability: Durability) async throws {
    let core = try await makeBoard(durability)
    try await core.dispatch(.left(.readPrefix)).finish()
    await core.updateDependencies { $0.prefix = "updated" }
    try await core.dispatch(.left(.readPrefix)).finish()
    #expect(await core.state.left.loaded == ["core", "updated"])
    #expect(await core.dependencies.prefix == "updated")
    await core.shutdown()
  }

  @Test("effects on the injected clock, cancellable by id", arguments: Durability.allCases)
  func effectsOnTheClock(durability: Durability) async throws {
    let clock = ManualClock()
    let core = try await makeBoard(durability, clock: clock)
    try await core.dispatch(.left(.load("a")))
    try await core.dispatch(.parentLoad)
    try await clock.waitForSleepers(atLeast: 2)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.left.loaded == ["a"])
    #expect(await core.state.notes == ["parent loaded"])
    try await core.dispatch(.left(.load("b")))
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.left(.cancelLoad))
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.left.loaded == ["a"])
    await core.shutdown()
  }

  @Test("subscribe, with a key path and with a closure, and every-state observers", arguments: Durability.allCases)
  func subscribers(durability: Durability) async throws {
    let core = try await makeBoard(durability)
    let byKeyPath = Events<Int>()
    let byClosure = Events<Int>()
    let one = await core.subscribe(to: \.rows.count) { byKeyPath.record($0) }
    let countNotes: @Sendable (Board) -> Int = { $0.notes.count }
    let two = await core.subscribe(to: countNotes) { byClosure.record($0) }
    let every = collect(await core.observe(\.notes.count, buffering: .all))
    let log = collect(await core.actions())
    try await core.dispatch(.addRow(1))
    try await core.dispatch(contentsOf: [.note("a"), .note("b")])
    #expect(byKeyPath.all == [0, 1])
    #expect(byClosure.all == [0, 2])
    one.cancel()
    two.cancel()
    await core.shutdown()
    #expect(await every.value == [0, 1, 2])
    #expect(await log.value.map(\.action) == [.addRow(1), .note("a"), .note("b")])
  }

  @Test("the @Observable bridge mirrors the core's props", arguments: Durability.allCases)
  @MainActor
  func bridge(durability: Durability) async throws {
    let core = try await makeBoard(durability)
    let model = BoardModel()
    let bridge = await core.bind(.prop(\.notes.count, to: \.notes), on: model)
    try await core.dispatch(.note("a"))
    await bridge.update()
    #expect(model.notes == 1)
    bridge.cancel()
    await core.shutdown()
  }

  @Test("enqueue on a bounded mailbox, and its typed errors", arguments: Durability.allCases)
  func enqueue(durability: Durability) async throws {
    let core = try await makeBoard(durability)
    try await core.enqueue(.note("a"))
    #expect(await core.state.notes == ["a"])
    await core.shutdown()
    await #expect(throws: CoreError.shutDown) { try await core.enqueue(.note("b")) }
  }
}

@MainActor @Observable
final class BoardModel {
  var notes = 0
}

@Suite("A durable core", .hangDetector)
struct DurableCoreTests {
  @Test("the journal holds the actions as the reducer got them: after middleware, with every follow-up, in order")
  func theJournalHoldsWhatWasReduced() async throws {
    let journal = MemoryJournal<Board, BoardAction>()
    let core = try await makeBoard(.journaled, journal: journal)
    _ = await core.addMiddleware { action, _, _ in action == .note("swap") ? .replace(with: .note("swapped")) : .pass }
    try await core.dispatch(.note("swap"))
    try await core.dispatch(.right(.readPrefix)).finish()
    try await core.dispatch(.parentCancelLoad)
    #expect(journal.log == [.note("swapped"), .right(.readPrefix), .right(.loaded("right")), .parentCancelLoad])
    await core.shutdown()
    #expect(journal.contents.withLock { $0.closed })
  }

  @Test("recovery reduces the journal's actions and starts no effect; the reopened state is the live one")
  func recoveryStartsNoEffect() async throws {
    let journal = MemoryJournal<Board, BoardAction>()
    let clock = ManualClock()
    let core = try await makeBoard(.journaled, clock: clock, journal: journal)
    try await core.dispatch(.left(.load("a")))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    try await core.dispatch(.left(.load("never")))
    let live = await core.state
    await core.shutdown(.immediate)

    let reopened = try await makeBoard(.journaled, clock: clock, journal: journal.reopened())
    #expect(await reopened.state == live)
    #expect(reopened.metrics.effectsInFlight == 0)
    await reopened.shutdown()
  }

  @Test("nothing outside sees a slice before its append: the state, observers and effects wait for it")
  func nothingSeesASliceBeforeItIsDurable() async throws {
    let journal = GatedJournal()
    let core = try await Core(
      initialState: 0, journal: journal,
      reducer: Reduce { (count: inout Int, add: Int) in
        count += add
      })
    let values = collect(await core.states(buffering: .all))
    core.send(1)
    await journal.appendStarted.wait()
    // The append is held: the state the core reduced is not visible yet.
    let read = Task { await core.state }
    while await core.journalReadersWaiting == 0 { await Task.yield() }
    #expect(journal.appendsDone == 0)
    journal.releaseAppend()
    #expect(await read.value == 1)
    await core.shutdown()
    #expect(await values.value == [0, 1])
  }

  @Test("an action the journal refuses is not reduced: its dispatcher gets the error, a sender's is reported")
  func refusedActions() async throws {
    let journal = MemoryJournal<Board, BoardAction>(refuse: { $0 == .note("bad") })
    let diagnostics = Events<EffectFailure>()
    let core = try await makeBoard(.journaled, journal: journal, diagnostics: diagnostics)
    await #expect(throws: CoreError.journal(MemoryJournal<Board, BoardAction>.Refused())) {
      try await core.dispatch(.note("bad"))
    }
    core.send(.note("bad"))
    try await core.dispatch(.note("good"))
    #expect(await core.state.notes == ["good"])
    #expect(journal.log == [.note("good")])
    let reported = diagnostics.all.compactMap { $0.error as? CoreDiagnostic }
    #expect(reported.count == 1)
    guard case .notJournaled(let action, _)? = reported.first else {
      Issue.record("reported \(reported)")
      return
    }
    #expect(action as? BoardAction == .note("bad"))
    await core.shutdown()
  }

  @Test("a failed append shuts the core down: its dispatchers get the error, the diagnostics handler is told")
  func aFailedAppendStopsTheCore() async throws {
    let journal = MemoryJournal<Board, BoardAction>()
    let diagnostics = Events<EffectFailure>()
    let core = try await makeBoard(.journaled, journal: journal, diagnostics: diagnostics)
    try await core.dispatch(.note("kept"))
    journal.failNextAppend(with: MemoryError.first)
    await #expect(throws: CoreError.journal(MemoryError.first)) { try await core.dispatch(.note("lost")) }
    #expect(core.hasShutDown)
    #expect(core.send(.note("later")) == .shutDown)
    await #expect(throws: CoreError.shutDown) { try await core.dispatch(.note("later")) }
    await core.shutdown()
    #expect(journal.log == [.note("kept")])
    #expect(
      diagnostics.all.contains {
        if case .journalFailed(let error)? = $0.error as? CoreDiagnostic { return error as? MemoryError == .first }
        return false
      })
    let reopened = try await makeBoard(.journaled, journal: journal.reopened())
    #expect(await reopened.state.notes == ["kept"])
    await reopened.shutdown()
  }

  @Test("after a failed append, its slice's sends and what is still queued are reported; shutdown and readers return")
  func queuedActionsAfterAFailure() async throws {
    let journal = GatedJournal(failing: true)
    let diagnostics = Events<EffectFailure>()
    let core = try await Core(
      initialState: 0, journal: journal, diagnostics: { diagnostics.record($0) },
      reducer: Reduce { (count: inout Int, add: Int) in count += add })
    core.send(1)
    await journal.appendStarted.wait()
    // Queued behind the held append, which fails.
    core.send(2)
    core.send(3)
    let waiting = Task { try await core.waitUntilIdle() }
    journal.releaseAppend()
    try await waiting.value
    await core.shutdown()
    #expect(core.hasShutDown)
    let notJournaled = diagnostics.all.compactMap { failure -> Int? in
      if case .notJournaled(let action, _)? = failure.error as? CoreDiagnostic { return action as? Int }
      return nil
    }
    #expect(notJournaled == [1, 2, 3])
  }

  @Test("the interval sync runs on the core's clock: advancing a ManualClock syncs, only with records unsynced")
  func intervalSyncOnTheCoresClock() async throws {
    let clock = ManualClock()
    let journal = MemoryJournal<Board, BoardAction>(syncInterval: .milliseconds(50))
    var syncs = journal.syncSignal.makeAsyncIterator()
    let core = try await makeBoard(.journaled, clock: clock, journal: journal)
    try await core.dispatch(.note("a"))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .milliseconds(50))
    #expect(await syncs.next() == 1)
    // Nothing appended since: the next tick does not sync.
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .milliseconds(50))
    try await core.dispatch(.note("b"))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .milliseconds(50))
    #expect(await syncs.next() == 2)
    try await core.sync()
    #expect(await syncs.next() == 3)
    await core.shutdown()
  }

  @Test("dispatch(contentsOf:) of nothing on a durable core returns, having waited for what was queued")
  func dispatchingNothing() async throws {
    let journal = MemoryJournal<Board, BoardAction>()
    let core = try await makeBoard(.journaled, journal: journal)
    core.send(.note("queued"))
    try await core.dispatch(contentsOf: [])
    #expect(journal.log == [.note("queued")])
    await core.shutdown()
  }

  @Test("snapshots when the journal says one is due: recovery starts from it")
  func snapshots() async throws {
    let journal = MemoryJournal<Board, BoardAction>(snapshotEvery: 3)
    let core = try await makeBoard(.journaled, journal: journal)
    for index in 1...7 { try await core.dispatch(.note("\(index)")) }
    let live = await core.state
    await core.shutdown()
    let contents = journal.contents.withLock { $0 }
    #expect(contents.snapshots == 2)
    #expect(contents.snapshot?.notes == ["1", "2", "3", "4", "5", "6"])
    #expect(contents.actions == [.note("7")])
    let reopened = try await makeBoard(.journaled, journal: journal.reopened())
    #expect(await reopened.state == live)
    await reopened.shutdown()
  }

  @Test("a replay into a durable core is journaled; middleware does not run on it")
  func replayIsJournaled() async throws {
    let journal = MemoryJournal<Board, BoardAction>()
    let core = try await makeBoard(.journaled, journal: journal)
    let recording = Recording<Board, BoardAction>(
      initialState: Board(), entries: [.init(action: .note("a"), time: .zero), .init(action: .addRow(2), time: .zero)],
      finalState: Board(rows: [Panel(id: 2)], notes: ["a"]))
    try await core.replay(recording)
    #expect(journal.log == [.note("a"), .addRow(2)])
    #expect(await core.state == recording.finalState)
    await core.shutdown()
  }

  @Test("a journal that cannot be recovered: the core is not made, the journal is closed")
  func recoveryFailure() async throws {
    let journal = FailingRecoveryJournal()
    await #expect(throws: CoreError.journal(MemoryError.second)) {
      _ = try await Core(initialState: 0, journal: journal, reducer: Reduce { (_: inout Int, _: Int) in })
    }
    #expect(journal.closed.withLock { $0 })
  }
}

/// A journal whose appends wait until the test lets them go.
final class GatedJournal: CoreJournal {
  let failing: Bool
  init(failing: Bool = false) { self.failing = failing }
  let appendStarted = Gate()
  let held = Mutex<CheckedContinuation<Void, Never>?>(nil)
  let done = Mutex(0)
  var appendsDone: Int { done.withLock { $0 } }
  var syncInterval: Duration? { nil }
  func recoverState() async throws -> Int? { nil }
  func recoverActions() async throws -> [Int]? { nil }
  func encode(_ action: Int) throws -> [UInt8] { [UInt8(action)] }
  func append(_ records: [[UInt8]]) async throws -> Bool {
    await withCheckedContinuation { continuation in
      held.withLock { $0 = continuation }
      appendStarted.open()
    }
    done.withLock { $0 += 1 }
    if failing { throw MemoryError.first }
    return false
  }
  func releaseAppend() {
    held.withLock { $0 }?.resume()
  }
  func snapshot(_ state: Int) async throws {}
  func sync() async throws {}
  func close() async {}
}

final class FailingRecoveryJournal: CoreJournal {
  let closed = Mutex(false)
  var syncInterval: Duration? { nil }
  func recoverState() async throws -> Int? { nil }
  func recoverActions() async throws -> [Int]? { throw MemoryError.second }
  func encode(_ action: Int) throws -> [UInt8] { [] }
  func append(_ records: [[UInt8]]) async throws -> Bool { false }
  func snapshot(_ state: Int) async throws {}
  func sync() async throws {}
  func close() async { closed.withLock { $0 = true } }
}

extension Core {
  var journalDebug: String {
    guard let driver = journal else { return "no journal" }
    return
      "dispatchers \(driver.dispatchers.count) readers \(driver.readers.count) turnWaiters \(driver.turnWaiters.count) drainWaiting \(driver.drainWaitingForReaders != nil) machine \(driver.machine)"
  }
}

@Suite("A durable core failing under load", .hangDetector)
struct DurableFailureLoadTests {
  @Test("8 dispatchers into an append that fails from its 20th call: every one returns, shutdown too")
  func dispatchersIntoAFailingAppend() async throws {
    for round in 0..<1_000 {
      let journal = MemoryJournal<Int, Int>(failFrom: 20)
      let core = try await Core(
        initialState: 0, journal: journal, diagnostics: { _ in },
        reducer: Reduce { (count: inout Int, add: Int) in count += add })
      let done = Counter8()
      let tasks = (0..<8).map { producer in
        Task { [core, done] in
          for index in 0..<30 {
            do { try await core.dispatch(producer * 100 + index) } catch { break }
          }
          done.add()
        }
      }
      var spins = 0
      while done.value < 8 {
        await Task.yield()
        spins += 1
        if spins == 2_000_000 {
          Issue.record("round \(round): \(await core.journalDebug)")
          return
        }
      }
      for task in tasks { await task.value }
      await core.shutdown()
    }
  }
}

final class Counter8: Sendable {
  let count = Atomic<Int>(0)
  func add() { count.add(1, ordering: .relaxed) }
  var value: Int { count.load(ordering: .relaxed) }
}
