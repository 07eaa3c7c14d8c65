import AsyncCore
import Synchronization
import Testing

@Suite("Core observation", .hangDetector)
struct ObservationTests {
  @Test("a new observer receives the current state first")
  func currentStateFirst() async throws {
    let core = makeCounterCore(Counter(count: 5))
    core.send(.increment)  // accepted before observe: part of the current state
    var iterator = await core.observe(\.count).makeAsyncIterator()
    #expect(await iterator.next() == 6)
    try await core.dispatch(.increment)
    #expect(await iterator.next() == 7)
  }

  @Test("every latest observer ends on the final state", arguments: [1, 10, 1_000])
  func latestObserversEndOnFinalState(observers: Int) async throws {
    let core = makeCounterCore()
    var consumers: [Task<[Int], Never>] = []
    for _ in 0..<observers { consumers.append(collect(await core.observe(\.count))) }
    for round in 0..<100 {
      if round.isMultiple(of: 2) { core.send(.increment) } else { try await core.dispatch(.increment) }
    }
    await core.shutdown()
    for consumer in consumers {
      let received = await consumer.value
      #expect(received.last == 100)
      // Skipping is allowed; going back or repeating is not.
      #expect(received == received.sorted() && Set(received).count == received.count)
    }
  }

  @Test("every .all observer sees each state, in order", arguments: [1, 10, 1_000])
  func allObserversSeeEveryState(observers: Int) async throws {
    let core = makeCounterCore()
    var consumers: [Task<[Counter], Never>] = []
    for _ in 0..<observers { consumers.append(collect(await core.states(buffering: .all))) }
    for round in 0..<100 {
      switch round % 3 {
      case 0: core.send(.increment)
      case 1: try await core.dispatch(.increment)
      default: core.send(contentsOf: [.increment])
      }
    }
    await core.shutdown()
    for consumer in consumers {
      #expect(await consumer.value.map(\.count) == Array(0...100))
    }
  }

  @Test("dispatch(contentsOf:) publishes once to latest observers and per action to .all observers")
  func batchPublication() async throws {
    let core = makeCounterCore()
    // The comparison runs once per publication after the first value.
    let latestComparisons = Counted()
    let everyComparisons = Counted()
    let latest = await core.observe(
      \.count,
      removeDuplicates: {
        latestComparisons.add()
        return $0 == $1
      })
    let every = collect(
      await core.observe(
        \.count,
        removeDuplicates: {
          everyComparisons.add()
          return $0 == $1
        }, buffering: .all))
    try await core.dispatch(contentsOf: [.increment, .increment, .increment])
    _ = await core.state  // publishes to latest observers what the dispatch left to the drain
    #expect(latestComparisons.value == 1)
    #expect(everyComparisons.value == 3)
    await core.shutdown()
    #expect(await collect(latest).value == [3])
    #expect(await every.value == [0, 1, 2, 3])
  }

  @Test("an observer whose props did not change is not woken")
  func unchangedPropsAreNotDelivered() async throws {
    let core = makeCounterCore()
    let counts = collect(await core.observe(\.count, buffering: .all))
    let latestCounts = collect(await core.observe(\.count))
    let labels = collect(await core.observe(\.label, buffering: .all))
    for index in 0..<100 { try await core.dispatch(.setLabel("\(index)")) }
    try await core.dispatch(.increment)
    for index in 0..<100 { core.send(.setLabel("again \(index)")) }
    await core.shutdown()
    #expect(await counts.value == [0, 1])  // 2 deliveries for 201 actions
    #expect(await latestCounts.value.last == 1)
    #expect(await latestCounts.value.count <= 2)
    #expect(await labels.value.count == 201)
  }

  @Test("a custom removeDuplicates predicate decides what is delivered")
  func customRemoveDuplicates() async throws {
    let core = makeCounterCore()
    // Deliver only once the count moved by 10 or more since the last delivery.
    let tens = collect(await core.observe(\.count, removeDuplicates: { abs($1 - $0) < 10 }, buffering: .all))
    for _ in 0..<25 { try await core.dispatch(.increment) }
    await core.shutdown()
    #expect(await tens.value == [0, 10, 20])
  }

  @Test("a closure selector and non-Equatable props")
  func closureSelector() async throws {
    struct Parity: Sendable { let isEven: Bool }  // not Equatable: every publication delivered
    let core = makeCounterCore()
    let parities = collect(await core.observe({ Parity(isEven: $0.count.isMultiple(of: 2)) }, buffering: .all))
    let evens = collect(await core.observe({ $0.count.isMultiple(of: 2) }, buffering: .all))
    for _ in 0..<4 { try await core.dispatch(.increment) }
    await core.shutdown()
    #expect(await parities.value.map(\.isEven) == [true, false, true, false, true])
    #expect(await evens.value == [true, false, true, false, true])
  }

  @Test("a slow latest observer skips to the newest state")
  func latestSkips() async throws {
    let core = makeCounterCore()
    var iterator = await core.observe(\.count).makeAsyncIterator()
    for _ in 0..<50 { try await core.dispatch(.increment) }
    _ = await core.state  // publishes what the dispatches left to the drain
    #expect(await iterator.next() == 50)  // not 0: the unread current value was replaced
    try await core.dispatch(.increment)
    #expect(await iterator.next() == 51)
  }

  @Test("the action log gives each action with the state before and after")
  func actionLog() async throws {
    let core = makeCounterCore()
    let log = collect(await core.actions())
    try await core.dispatch(.add(2))
    core.send(.setLabel("x"))
    try await core.dispatch(contentsOf: [.increment])
    await core.shutdown()
    let records = await log.value
    #expect(records.map(\.action) == [.add(2), .setLabel("x"), .increment])
    #expect(records.map(\.stateBefore.count) == [0, 2, 2])
    #expect(records.map(\.stateAfter.count) == [2, 2, 3])
    #expect(records[1].stateAfter.label == "x")
  }
}

/// Counts calls made from inside the core.
final class Counted: Sendable {
  private let count = Atomic<Int>(0)
  func add() { count.add(1, ordering: .relaxed) }
  var value: Int { count.load(ordering: .relaxed) }
}
