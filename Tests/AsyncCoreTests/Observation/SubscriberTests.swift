import AsyncCore
import Testing

/// Synchronous subscribers, called inside the core after
/// each publication, with the same selectors and deduplication as `observe`.
@Suite("Synchronous subscribers", .hangDetector)
struct SubscriberTests {
  @Test("a subscriber is called with the current value at once, then after each change, before dispatch returns")
  func currentValueFirstThenEachChange() async throws {
    let core = makeCounterCore(Counter(count: 5))
    let counts = Events<Int>()
    let subscriber = await core.subscribe(to: \.count) { counts.record($0) }
    #expect(counts.all == [5])
    try await core.dispatch(.increment)
    #expect(counts.all == [5, 6])  // no waiting: called before dispatch returned
    try await core.dispatch(.add(2))
    #expect(counts.all == [5, 6, 8])
    #expect(subscriber.isActive)
  }

  @Test("a value equal to the last one it was called with is skipped, Equatable or not statically")
  func duplicatesAreSkipped() async throws {
    let core = makeCounterCore()
    let counts = Events<Int>()
    let anyCounts = Events<String>()
    let subscriber = await core.subscribe(to: \.count) { counts.record($0) }
    // Statically `any Sendable`: compared through its dynamic `Equatable` type.
    let dynamic = await core.subscribe(to: { $0.count as any Sendable }, { anyCounts.record("\($0)") })
    try await core.dispatch(.setLabel("a"))  // the count did not change
    try await core.dispatch(.increment)
    try await core.dispatch(.setLabel("b"))
    #expect(counts.all == [0, 1])
    #expect(anyCounts.all == ["0", "1"])
    withExtendedLifetime((subscriber, dynamic)) {}
  }

  @Test("removeDuplicates decides what is skipped; { _, _ in false } is called on every publication")
  func customComparison() async throws {
    let core = makeCounterCore()
    let every = Events<Int>()
    let byParity = Events<Int>()
    let all = await core.subscribe(to: \.count, removeDuplicates: { _, _ in false }, { every.record($0) })
    let parity = await core.subscribe(to: \.count, removeDuplicates: { $0 % 2 == $1 % 2 }, { byParity.record($0) })
    try await core.dispatch(.setLabel("a"))
    try await core.dispatch(.add(2))
    try await core.dispatch(.increment)
    #expect(every.all == [0, 0, 2, 3])
    #expect(byParity.all == [0, 3])
    withExtendedLifetime((all, parity)) {}
  }

  @Test("subscribers are called in registration order; one sharing a key path at the first one's place; `.all` first")
  func callOrder() async throws {
    let core = makeCounterCore()
    let calls = Events<String>()
    var tokens: [Subscriber] = []
    tokens.append(await core.subscribe(to: \.count) { calls.record("A \($0)") })
    tokens.append(await core.subscribe(to: { $0.count * 10 }) { calls.record("B \($0)") })
    tokens.append(await core.subscribe(to: \.count, buffering: .all) { calls.record("C \($0)") })
    tokens.append(await core.subscribe(to: \.count) { calls.record("D \($0)") })  // joins A's key path
    tokens.append(await core.subscribe(to: { $0.count * 100 }) { calls.record("E \($0)") })
    #expect(calls.all == ["A 0", "B 0", "C 0", "D 0", "E 0"])  // each at once, as it registers
    calls.removeAll()
    try await core.dispatch(.increment)
    #expect(calls.all == ["C 1", "A 1", "D 1", "B 10", "E 100"])
    calls.removeAll()
    tokens[0].cancel()  // A leaves; D keeps the key path's place
    try await core.dispatch(.increment)
    #expect(calls.all == ["C 2", "D 2", "B 20", "E 200"])
    withExtendedLifetime(tokens) {}
  }

  @Test("`.all` is called after every action of a batch, `.latest` once for the batch")
  func policies() async throws {
    let core = makeCounterCore()
    let every = Events<Int>()
    let latest = Events<Int>()
    let all = await core.subscribe(to: \.count, buffering: .all) { every.record($0) }
    let last = await core.subscribe(to: \.count) { latest.record($0) }
    try await core.dispatch(contentsOf: [.increment, .increment, .increment])
    #expect(every.all == [0, 1, 2, 3])
    #expect(latest.all == [0, 3])
    withExtendedLifetime((all, last)) {}
  }

  @Test("sent actions: the subscriber ends on the final value, in order, and never sees a state twice")
  func sentActions() async throws {
    let core = makeCounterCore()
    let counts = Events<Int>()
    let subscriber = await core.subscribe(to: \.count) { counts.record($0) }
    for _ in 0..<1_000 { core.send(.increment) }
    #expect(await core.state.count == 1_000)
    let seen = counts.all
    #expect(seen.last == 1_000)
    #expect(seen == seen.sorted() && Set(seen).count == seen.count)
    withExtendedLifetime(subscriber) {}
  }

  @Test("cancel() stops the calls, counts the subscriber out, and can be called twice")
  func cancel() async throws {
    let core = makeCounterCore()
    let counts = Events<Int>()
    let subscriber = await core.subscribe(to: \.count) { counts.record($0) }
    #expect(core.metrics.observers == 1)
    subscriber.cancel()
    subscriber.cancel()
    #expect(!subscriber.isActive)
    #expect(core.metrics.observers == 0)
    try await core.dispatch(.increment)
    #expect(counts.all == [0])
  }

  @Test("releasing the token unsubscribes")
  func release() async throws {
    let core = makeCounterCore()
    let counts = Events<Int>()
    do {
      _ = await core.subscribe(to: \.count) { counts.record($0) }  // released at once
    }
    #expect(core.metrics.observers == 0)
    try await core.dispatch(.increment)
    #expect(counts.all == [0])
  }

  /// Tells a test when it is released.
  final class Capture: Sendable {
    let released: Signal<Void>
    init(released: Signal<Void>) { self.released = released }
    deinit { released.emit() }
  }

  @Test("an ended subscription lets its callback go at once, with what it captured", arguments: [true, false])
  func endedSubscriptionReleasesItsCallback(byCancel: Bool) async throws {
    let core = makeCounterCore()
    let released = Signal<Void>()
    var subscriber: Subscriber?
    do {
      let capture = Capture(released: released)
      subscriber = await core.subscribe(to: \.count) { _ in withExtendedLifetime(capture) {} }
    }
    if byCancel { subscriber?.cancel() }
    subscriber = nil
    // No dispatch follows: the core drops it without a publication.
    #expect(await released.next() != nil)
    #expect(core.metrics.observers == 0)
  }

  @Test("a callback that holds its core does not keep it alive once the subscription ended")
  func callbackHoldingTheCore() async throws {
    var core: CounterCore? = makeCounterCore()
    let counts = await core!.observe(\.count)
    let loop = Task {
      var last = -1
      for await count in counts { last = count }
      return last  // the loop ends when the core goes
    }
    var subscriber: Subscriber? = await core!.subscribe(to: \.count) { [core] count in
      if count == 1 { core?.send(.increment) }
    }
    try await core!.dispatch(.increment)
    #expect(await core!.state.count == 2)
    subscriber?.cancel()
    subscriber = nil
    core = nil
    #expect(await loop.value == 2)
  }

  @Test("a subscriber may cancel itself from its own call")
  func cancelFromInside() async throws {
    let core = makeCounterCore()
    let counts = Events<Int>()
    let token = Box<Subscriber?>(nil)
    token.set(
      await core.subscribe(to: \.count) { count in
        counts.record(count)
        if count == 2 { token.value?.cancel() }
      })
    for _ in 0..<4 { try await core.dispatch(.increment) }
    #expect(counts.all == [0, 1, 2])
    #expect(token.value?.isActive == false)
  }

  @Test("a subscriber may send: the action is reduced after the publication, never re-entrantly")
  func sendFromASubscriber() async throws {
    let core = makeCounterCore()
    let counts = Events<Int>()
    let subscriber = await core.subscribe(to: \.count) { count in
      counts.record(count)
      if count == 3 { core.send(.add(-3)) }
    }
    for _ in 0..<3 { try await core.dispatch(.increment) }
    #expect(await core.state.count == 0)
    #expect(counts.all == [0, 1, 2, 3, 0])
    withExtendedLifetime(subscriber) {}
  }

  @Test("shutdown ends every subscriber; one made afterwards is called once with the final value")
  func shutdown() async throws {
    let core = makeCounterCore()
    let counts = Events<Int>()
    let subscriber = await core.subscribe(to: \.count) { counts.record($0) }
    try await core.dispatch(.increment)
    await core.shutdown()
    #expect(!subscriber.isActive)
    #expect(core.metrics.observers == 0)
    let late = Events<Int>()
    let after = await core.subscribe(to: \.count) { late.record($0) }
    #expect(late.all == [1])
    #expect(!after.isActive)
    #expect(counts.all == [0, 1])
  }

  @Test("a subscriber made from the core's own effect is called like any other")
  func fromAnEffect() async throws {
    let counts = Events<Int>()
    let holder = Box<Subscriber?>(nil)
    let reference = WeakBox<Core<Int, Int>>()
    let core = Core<Int, Int>(initialState: 0) { state, action in
      state += action
      guard action == 0 else { return .none }
      return .run { _ in
        guard let core = reference.object else { return }
        holder.set(await core.subscribe(to: { $0 }, { counts.record($0) }))
      }
    }
    reference.set(core)
    try await core.dispatch(0).finish()
    try await core.dispatch(4)
    #expect(counts.all == [0, 4])
    #expect(holder.value?.isActive == true)
    await core.shutdown()
  }
}

/// `dispatch` leaves latest-value observers to the drain,
/// which coalesces the publications of dispatches that come back to back.
@Suite("Publication after dispatch", .hangDetector)
struct PublicationTests {
  @Test("a latest observer ends on the final state of a dispatch loop", arguments: [1, 10, 100])
  func latestObserversEndOnTheFinalState(observers: Int) async throws {
    let core = makeCounterCore()
    var loops: [Task<[Int], Never>] = []
    for _ in 0..<observers {
      let counts = await core.observe(\.count)
      loops.append(
        Task {
          var seen: [Int] = []
          for await count in counts {
            seen.append(count)
            if count == 2_000 { break }
          }
          return seen
        })
    }
    for _ in 0..<2_000 { try await core.dispatch(.increment) }
    for loop in loops {
      let seen = await loop.value
      #expect(seen.last == 2_000)
      #expect(seen == seen.sorted() && Set(seen).count == seen.count)
    }
  }

  @Test("`.all` observers get every state of a dispatch loop, in order")
  func everyStateObservers() async throws {
    let core = makeCounterCore()
    let counts = await core.observe(\.count, buffering: .all)
    let loop = Task {
      var seen: [Int] = []
      for await count in counts {
        seen.append(count)
        if count == 500 { break }
      }
      return seen
    }
    for _ in 0..<500 { try await core.dispatch(.increment) }
    #expect(await loop.value == Array(0...500))
  }

  @Test("an action sent during a dispatch loop is reduced in its place and published")
  func sendDuringADispatchLoop() async throws {
    let core = makeCounterCore()
    let labels = await core.observe(\.label)
    let seen = Task {
      for await label in labels where label == "sent" { return true }
      return false
    }
    for index in 0..<5_000 {
      try await core.dispatch(.increment)
      if index == 4_000 { core.send(.setLabel("sent")) }  // long after the drain began to pause
    }
    #expect(await seen.value)
    #expect(await core.state.count == 5_000)
  }

  @Test("an action sent last, right after a dispatch loop, is reduced without anything else reading the core")
  func sendAfterADispatchLoop() async throws {
    let core = makeCounterCore()
    let labels = await core.observe(\.label)
    let seen = Task {
      for await label in labels where label == "last" { return true }
      return false
    }
    for _ in 0..<5_000 { try await core.dispatch(.increment) }
    core.send(.setLabel("last"))
    #expect(await seen.value)
  }

  @Test("reading the state publishes what dispatches left: the next value taken is the newest")
  func statePublishesWhatIsDue() async throws {
    let core = makeCounterCore()
    var counts = (await core.observe(\.count)).makeAsyncIterator()
    #expect(await counts.next() == 0)
    for _ in 0..<100 { try await core.dispatch(.increment) }
    #expect(await core.state.count == 100)
    #expect(await counts.next() == 100)
  }

  @Test("shutdown right after a dispatch: observers end on its state")
  func shutdownPublishesWhatIsDue() async throws {
    for _ in 0..<50 {
      let core = makeCounterCore()
      let counts = await core.observe(\.count)
      let loop = Task {
        var last = -1
        for await count in counts { last = count }
        return last
      }
      try await core.dispatch(.add(7))
      await core.shutdown()
      #expect(await loop.value == 7)
    }
  }
}
