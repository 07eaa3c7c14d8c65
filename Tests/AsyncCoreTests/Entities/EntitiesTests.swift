import AsyncCoreProcessTestSupport
import AsyncCoreTestSupport
import AsyncCoreTesting
import Testing

@testable import AsyncCore

/// One entity's state: its id and what it was sent, in order.
struct Ledger: Equatable, Sendable {
  var id: String
  var log: [Int] = []
}

enum LedgerAction: Equatable, Sendable {
  case add(Int)
  /// An effect that sleeps `seconds` on the core's clock, then sends `.add(value)`.
  case later(Int, seconds: Int)
}

let ledgerReducer = Reduce<Ledger, LedgerAction> { state, action in
  switch action {
  case .add(let value):
    state.log.append(value)
    return .none
  case .later(let value, let seconds):
    return .run { send in
      try await send.clock.sleep(for: .seconds(seconds))
      await send(.add(value))
    }
  }
}

typealias LedgerStore = MemoryEntityStore<String, Ledger, LedgerAction>

func makeLedgers(
  _ store: LedgerStore, passivation: Passivation = .never, clock: ManualClock = ManualClock(),
  mailboxCapacity: Int? = nil, diagnostics: Events<EffectFailure> = Events(),
  prepare: (@Sendable (String, Core<Ledger, LedgerAction>) async -> Void)? = nil
) -> Entities<String, Ledger, LedgerAction> {
  Entities(
    store: store, passivation: passivation, clock: clock, mailboxCapacity: mailboxCapacity,
    diagnostics: { diagnostics.record($0) }, initialState: { Ledger(id: $0) }, prepare: prepare, reducer: ledgerReducer)
}

/// Waits for the first event `matching` accepts.
func next(
  _ events: inout AsyncStream<EntityEvent<String>>.Iterator, _ matching: (EntityEvent<String>) -> Bool
) async -> EntityEvent<String>? {
  while let event = await events.next() {
    if matching(event) { return event }
  }
  return nil
}

func isPassivated(_ id: String) -> (EntityEvent<String>) -> Bool {
  { if case .passivated(id) = $0 { true } else { false } }
}

@Suite("Entities: one core per id, activated and passivated", .hangDetector)
struct EntitiesTests {
  @Test("the first use activates from the stored snapshot and the records after it, or from the id")
  func activation() async throws {
    let store = LedgerStore()
    store.contents.withLock { $0.stored["ada"] = .init(snapshot: Ledger(id: "ada", log: [1]), actions: [.add(2)]) }
    let tallies = makeLedgers(store)
    try await tallies.dispatch(.add(3), to: "ada")
    #expect(try await tallies.state(of: "ada") == Ledger(id: "ada", log: [1, 2, 3]))
    #expect(try await tallies.state(of: "bob") == Ledger(id: "bob"))
    #expect(tallies.metrics.activations == 2)
    #expect(tallies.metrics.active == 2)
    await tallies.shutdown()
    #expect(store.stored("ada")?.snapshot == Ledger(id: "ada", log: [1, 2, 3]))
    #expect(store.stored("bob")?.snapshot == Ledger(id: "bob"))
    #expect(store.contents.withLock { $0.closed && $0.open.isEmpty })
  }

  @Test("an entity idle for the period passivates, on the registry's clock; its next use reads its writes")
  func idlePassivation() async throws {
    let store = LedgerStore()
    let clock = ManualClock()
    let tallies = makeLedgers(store, passivation: Passivation(idleAfter: .seconds(10)), clock: clock)
    var events = tallies.events().makeAsyncIterator()
    try await tallies.dispatch(.add(1), to: "ada")
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(9))
    try await clock.waitForSleepers(atLeast: 1)
    #expect(tallies.metrics.passivations == 0)
    await clock.advance(by: .seconds(1))
    #expect(await next(&events, isPassivated("ada")) != nil)
    #expect(tallies.metrics.active == 0)
    #expect(store.stored("ada")?.snapshot == Ledger(id: "ada", log: [1]))
    #expect(try await tallies.state(of: "ada").log == [1])
    #expect(store.contents.withLock { $0.opened } == 2)
    await tallies.shutdown()
  }

  @Test("over the limit, the least recently used entity passivates")
  func leastRecentlyUsed() async throws {
    let store = LedgerStore()
    let tallies = makeLedgers(store, passivation: Passivation(idleAfter: nil, maxActive: 2))
    var events = tallies.events().makeAsyncIterator()
    try await tallies.dispatch(.add(1), to: "a")
    try await tallies.dispatch(.add(2), to: "b")
    _ = try await tallies.state(of: "a")  // "b" is now the least recent
    try await tallies.dispatch(.add(3), to: "c")
    let first = await next(&events) { if case .passivated = $0 { true } else { false } }
    guard case .passivated(let id)? = first else {
      Issue.record("no passivation")
      return
    }
    #expect(id == "b")
    #expect(tallies.metrics.active == 2)
    #expect(store.stored("b")?.snapshot?.log == [2])
    await tallies.shutdown()
  }

  @Test("an entity with an effect in flight is not passivated; once it ends, it is")
  func effectKeepsActive() async throws {
    let store = LedgerStore()
    let clock = ManualClock()
    let tallies = makeLedgers(store, passivation: Passivation(idleAfter: .seconds(10)), clock: clock)
    var events = tallies.events().makeAsyncIterator()
    try await tallies.dispatch(.later(7, seconds: 15), to: "ada")
    try await clock.waitForSleepers(atLeast: 2)  // the effect and the sweeper
    await clock.advance(by: .seconds(10))
    try await clock.waitForSleepers(atLeast: 2)  // the sweeper swept, and sleeps again
    #expect(tallies.metrics.passivations == 0)
    #expect(tallies.metrics.active == 1)
    await clock.advance(by: .seconds(10))  // the effect ends at 15; idle from the sweep at 10 until 20
    #expect(await next(&events, isPassivated("ada")) != nil)
    #expect(store.stored("ada")?.snapshot?.log == [7])
    await tallies.shutdown()
  }

  @Test("an observer keeps its entity active until its loop ends")
  func observerKeepsActive() async throws {
    let store = LedgerStore()
    let clock = ManualClock()
    let tallies = makeLedgers(store, passivation: Passivation(idleAfter: .seconds(10)), clock: clock)
    var events = tallies.events().makeAsyncIterator()
    var logs: CoreStream<[Int]>.Iterator? = try await tallies.observe(\.log, of: "ada").makeAsyncIterator()
    #expect(await logs?.next() == [])
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(10))
    try await clock.waitForSleepers(atLeast: 1)
    #expect(tallies.metrics.passivations == 0)
    logs = nil
    await clock.advance(by: .seconds(10))
    #expect(await next(&events, isPassivated("ada")) != nil)
    await tallies.shutdown()
  }

  @Test("a caller inside withCore keeps its entity active; observers prepare added do not")
  func callerKeepsActive() async throws {
    let store = LedgerStore()
    let seen = Events<Int>()
    let tallies = makeLedgers(store, passivation: Passivation(idleAfter: nil, maxActive: 1)) { _, core in
      _ = await core.subscribe(to: \.log) { seen.record($0.count) }
    }
    var events = tallies.events().makeAsyncIterator()
    let inside = Gate()
    let entered = Gate()
    let holder = Task {
      try await tallies.withCore("a") { _ in
        entered.open()
        await inside.wait()
      }
    }
    await entered.wait()
    try await tallies.dispatch(.add(1), to: "b")  // over the limit, but "a" is in use
    #expect(tallies.metrics.active == 2)
    try await tallies.dispatch(.add(2), to: "c")  // "b" has only prepare's subscriber: it goes
    #expect(await next(&events, isPassivated("b")) != nil)
    inside.open()
    try await holder.value
    try await tallies.dispatch(.add(3), to: "d")
    let passivated = await next(&events) { if case .passivated = $0 { true } else { false } }
    guard case .passivated(let id)? = passivated else {
      Issue.record("no passivation")
      return
    }
    #expect(["a", "c"].contains(id))
    await tallies.shutdown()
  }

  @Test("actions sent while an entity activates wait, and are reduced first, in order")
  func sendsDuringActivation() async throws {
    let store = LedgerStore()
    store.holdReads()
    let tallies = makeLedgers(store)
    var reads = store.reads.makeAsyncIterator()
    #expect(tallies.send(.add(1), to: "ada") == .accepted)
    #expect(await reads.next() == "ada")
    #expect(tallies.send(.add(2), to: "ada") == .accepted)
    let dispatcher = Task { try await tallies.dispatch(.add(3), to: "ada") }
    #expect(tallies.send(.add(4), to: "ada") == .accepted)
    store.releaseReads()
    _ = try await dispatcher.value
    let log = try await tallies.state(of: "ada").log
    #expect(log.prefix(2) == [1, 2])
    #expect(Set(log) == [1, 2, 3, 4])
    await tallies.shutdown()
  }

  @Test("actions sent while an entity passivates wait for its next activation, in order; a task reads its writes")
  func sendsDuringPassivation() async throws {
    let store = LedgerStore()
    let tallies = makeLedgers(store, passivation: Passivation(idleAfter: nil, maxActive: 1))
    var begun = store.snapshotsBegun.makeAsyncIterator()
    try await tallies.dispatch(.add(1), to: "a")
    store.holdSnapshots()
    try await tallies.dispatch(.add(1), to: "b")  // "a" passivates, held in its snapshot
    #expect(await begun.next() == "a")
    #expect(tallies.send(.add(2), to: "a") == .accepted)
    #expect(tallies.send(.add(3), to: "a") == .accepted)
    let reader = Task { try await tallies.state(of: "a") }
    store.releaseSnapshots()
    #expect(try await reader.value.log == [1, 2, 3])
    #expect(store.stored("a")?.snapshot?.log == [1])
    await tallies.shutdown()
    #expect(store.stored("a")?.log == [.add(1), .add(2), .add(3)])
    #expect(store.stored("a")?.snapshot?.log == [1, 2, 3])
  }

  @Test(
    "sends raced against constant passivation: nothing lost, nothing reordered, nothing twice",
    arguments: [1, 3])
  func sendsRaceAgainstPassivation(maxActive: Int) async throws {
    let store = LedgerStore()
    let tallies = makeLedgers(store, passivation: Passivation(idleAfter: nil, maxActive: maxActive))
    let ids = ["a", "b", "c", "d", "e"]
    let perSender = 300
    try await withThrowingTaskGroup(of: Void.self) { group in
      for sender in 0..<4 {
        group.addTask {
          var random = SplitMix64(seed: UInt64(sender))
          for i in 0..<perSender {
            let id = ids[Int(random.next() % UInt64(ids.count))]
            let value = sender * 10_000 + i
            if i % 3 == 0 {
              try await tallies.dispatch(.add(value), to: id)
            } else {
              #expect(tallies.send(.add(value), to: id) == .accepted)
            }
          }
        }
      }
      try await group.waitForAll()
    }
    await tallies.shutdown()
    var all: [Int] = []
    for id in ids {
      let log = try #require(store.stored(id)?.snapshot?.log)
      for sender in 0..<4 {
        let mine = log.filter { $0 / 10_000 == sender }
        #expect(mine == mine.sorted(), "\(id): sender \(sender)'s actions out of order")
      }
      #expect(store.stored(id)?.log == log.map { .add($0) }, "\(id): the journal holds other than what was reduced")
      all += log
    }
    let sent: [Int] = (0..<4).flatMap { sender in (0..<perSender).map { sender * 10_000 + $0 } }
    #expect(all.sorted() == sent)
    #expect(tallies.metrics.passivations > 0)
  }

  @Test("the shutdown reduces what was accepted, stores every entity and closes the store; then it refuses")
  func shutdownStoresAll() async throws {
    let store = LedgerStore()
    let clock = ManualClock()
    let tallies = makeLedgers(store, clock: clock)
    var events = tallies.events().makeAsyncIterator()
    try await tallies.dispatch(.later(9, seconds: 1), to: "a")
    for value in 0..<50 { tallies.send(.add(value), to: "b") }
    let stopping = Task { await tallies.shutdown() }
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    await stopping.value
    #expect(store.stored("a")?.snapshot?.log == [9])
    #expect(store.stored("b")?.snapshot?.log == Array(0..<50))
    #expect(store.contents.withLock { $0.closed })
    #expect(tallies.send(.add(1), to: "a") == .shutDown)
    await #expect(throws: CoreError.shutDown) { try await tallies.dispatch(.add(1), to: "a") }
    await #expect(throws: CoreError.shutDown) { try await tallies.state(of: "a") }
    var passivated = 0
    while let event = await events.next() { if case .passivated = event { passivated += 1 } }
    #expect(passivated == 2)
  }

  @Test("an entity the store cannot read is refused alone: its callers get the error, its sends are reported")
  func activationFailure() async throws {
    let store = LedgerStore()
    store.contents.withLock { $0.unreadable = ["x"] }
    let diagnostics = Events<EffectFailure>()
    let tallies = makeLedgers(store, diagnostics: diagnostics)
    var events = tallies.events().makeAsyncIterator()
    #expect(tallies.send(.add(1), to: "x") == .accepted)
    let failed = await next(&events) { if case .activationFailed("x", _) = $0 { true } else { false } }
    #expect(failed != nil)
    await #expect(throws: CoreError.journal(LedgerStore.Unreadable())) { try await tallies.dispatch(.add(2), to: "x") }
    try await tallies.dispatch(.add(3), to: "y")
    #expect(try await tallies.state(of: "y").log == [3])
    let reports = diagnostics.all.compactMap { $0.error as? CoreDiagnostic }
    #expect(
      reports.contains {
        if case .notActivated("x", let action, _) = $0 { (action as? LedgerAction) == .add(1) } else { false }
      })
    #expect(reports.filter { if case .activationFailed("x", _) = $0 { true } else { false } }.count == 2)
    #expect(tallies.metrics.activationFailures == 2)
    await tallies.shutdown()
  }

  @Test("a snapshot that fails leaves the entity active and reports it; nothing is lost")
  func snapshotFailure() async throws {
    let store = LedgerStore()
    let diagnostics = Events<EffectFailure>()
    let tallies = makeLedgers(store, passivation: Passivation(idleAfter: nil, maxActive: 1), diagnostics: diagnostics)
    var events = tallies.events().makeAsyncIterator()
    try await tallies.dispatch(.add(1), to: "a")
    store.contents.withLock { $0.failingSnapshots = true }
    try await tallies.dispatch(.add(2), to: "b")
    let failed = await next(&events) { if case .passivationFailed("a", _) = $0 { true } else { false } }
    #expect(failed != nil)
    #expect(tallies.metrics.passivationFailures == 1)
    #expect(tallies.metrics.active == 2)
    #expect(
      diagnostics.all.contains {
        if case .passivationFailed("a", _)? = $0.error as? CoreDiagnostic { true } else { false }
      })
    try await tallies.dispatch(.add(3), to: "a")
    #expect(try await tallies.state(of: "a").log == [1, 3])
    store.contents.withLock { $0.failingSnapshots = false }
    await tallies.shutdown()
    #expect(store.stored("a")?.snapshot?.log == [1, 3])
  }

  @Test("callers waiting for an activation count in the metrics")
  func waitingCallers() async throws {
    let store = LedgerStore()
    store.holdReads()
    let tallies = makeLedgers(store)
    var reads = store.reads.makeAsyncIterator()
    let dispatcher = Task { try await tallies.dispatch(.add(1), to: "ada") }
    #expect(await reads.next() == "ada")
    #expect(tallies.metrics.waitingCallers == 1)
    store.releaseReads()
    _ = try await dispatcher.value
    #expect(tallies.metrics.waitingCallers == 0)
    #expect(
      tallies.metrics
        == EntitiesMetrics(
          active: 1, activations: 1, passivations: 0, activationFailures: 0, passivationFailures: 0,
          activationTime: .zero, waitingCallers: 0, ownership: nil))
    await tallies.shutdown()
  }

  @Test("in memory: every entity is an ordinary core, kept until the shutdown")
  func inMemory() async throws {
    let rooms = Entities<Int, Ledger, LedgerAction>(initialState: { Ledger(id: "room \($0)") }, reducer: ledgerReducer)
    var events = rooms.events().makeAsyncIterator()
    try await rooms.dispatch(.add(1), to: 1)
    rooms.send(.add(2), to: 1)
    try await rooms.enqueue(.add(3), to: 2)
    var logs = try await rooms.observe(\.log, of: 1).makeAsyncIterator()
    #expect(await logs.next() == [1, 2])
    let recorder = try await rooms.withCore(1) { core in await core.record(last: 10) }
    try await rooms.dispatch(.add(4), to: 1)
    let recording = await recorder.recording()
    #expect(try await rooms.state(of: 2) == Ledger(id: "room 2", log: [3]))
    await rooms.shutdown()
    #expect(await logs.next() == [1, 2, 4])
    #expect(await logs.next() == nil)
    #expect(recording.entries.map(\.action) == [.add(4)])
    var activated: [Int] = []
    var passivated: [Int] = []
    while let event = await events.next() {
      switch event {
      case .activated(let id): activated.append(id)
      case .passivated(let id): passivated.append(id)
      default: Issue.record("unexpected \(event)")
      }
    }
    #expect(activated == [1, 2])
    #expect(passivated.sorted() == [1, 2])
    #expect(rooms.metrics.activations == 2)
  }
}

@Suite("Entities: callers that wait", .hangDetector)
struct EntitiesWaitingTests {
  @Test("a caller waiting for an activation leaves at once when cancelled; its action is not reduced")
  func cancelledWhileWaiting() async throws {
    let store = LedgerStore()
    store.holdReads()
    let ledgers = makeLedgers(store)
    var reads = store.reads.makeAsyncIterator()
    let dispatcher = Task { try await ledgers.dispatch(.add(1), to: "ada") }
    #expect(await reads.next() == "ada")
    dispatcher.cancel()
    await #expect(throws: CoreError.cancelled) { _ = try await dispatcher.value }
    #expect(ledgers.metrics.waitingCallers == 0)
    let reader = Task { try await ledgers.state(of: "ada") }
    store.releaseReads()
    #expect(try await reader.value.log == [])
    await ledgers.shutdown()
  }

  @Test("a task cancelled before it calls gets .cancelled from a passive entity, and nothing waits")
  func cancelledBeforeWaiting() async throws {
    let store = LedgerStore()
    let ledgers = makeLedgers(store)
    let gate = Gate()
    let dispatcher = Task {
      await gate.wait()
      return try await ledgers.dispatch(.add(1), to: "ada")
    }
    dispatcher.cancel()
    gate.open()
    await #expect(throws: CoreError.cancelled) { _ = try await dispatcher.value }
    #expect(ledgers.metrics.waitingCallers == 0)
    await ledgers.shutdown()
    #expect(store.stored("ada") == nil)
  }
}
