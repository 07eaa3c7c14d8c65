import AsyncCore
import Synchronization
import Testing

/// Observers and subscribers made with the same key path
/// (and policy) share one evaluation of it per publication.
@Suite("Shared selections", .hangDetector)
struct SelectionGroupTests {
  @Test("subscribers and observers of one key path read it once per publication, however many there are")
  func oneReadPerPublication() async throws {
    let reads = Reads()
    let core = Core<Probed, Int>(
      initialState: Probed(reads: reads), reducer: Reduce { state, amount in state.value += amount })
    var subscribers: [Subscriber] = []
    for _ in 0..<10 { subscribers.append(await core.subscribe(to: \.tracked) { _ in }) }
    var streams: [CoreStream<Int>] = []
    for _ in 0..<10 { streams.append(await core.observe(\.tracked)) }
    reads.reset()
    try await core.dispatch(1)
    _ = await core.state  // publishes to the observers, if the dispatch left it due
    // One read for the subscribers' group, one for the observers'.
    #expect(reads.count == 2)
    // A closure selector has no identity to share: each reads on its own.
    let readTracked: @Sendable (Probed) -> Int = { $0.tracked }
    let closures = [await core.subscribe(to: readTracked) { _ in }, await core.subscribe(to: readTracked) { _ in }]
    reads.reset()
    try await core.dispatch(1)
    _ = await core.state
    #expect(reads.count == 4)
    withExtendedLifetime((subscribers, streams, closures)) {}
  }

  @Test("observers of one key path compare a new value once per publication, and again only where a value waits")
  func oneComparisonPerPublication() async throws {
    let comparisons = Reads()
    let core = Core<Compared, Int>(
      initialState: Compared(value: ComparisonCounted(value: 0, comparisons: comparisons)),
      reducer: Reduce { state, amount in state.value.value += amount })
    var iterators: [CoreStream<ComparisonCounted>.AsyncIterator] = []
    for _ in 0..<10 { iterators.append(await core.observe(\.value).makeAsyncIterator()) }
    for index in iterators.indices { #expect(await iterators[index].next()?.value == 0) }
    // Every consumer holds the last value published: one comparison, in
    // the group.
    comparisons.reset()
    try await core.dispatch(1)
    _ = await core.state  // publishes to the observers, if the dispatch left it due
    #expect(comparisons.count == 1)
    // Nobody took 1: each observer compares 0 with what its consumer holds
    // (0), and has nothing new to give.
    comparisons.reset()
    try await core.dispatch(-1)
    _ = await core.state
    #expect(comparisons.count == 11)
    try await core.dispatch(2)
    for index in iterators.indices { #expect(await iterators[index].next()?.value == 2) }
  }

  @Test("values read through key paths are right for stored, nested, computed, optional-chained and class paths")
  func everyKindOfKeyPath() async throws {
    let core = Core<Shapes, String>(
      initialState: Shapes(),
      reducer: Reduce { state, name in
        state.inner.name = name
        state.inner.tags.append(name)
        state.optional = Shapes.Inner(name: name, tags: [])
        state.box = Shapes.Box(name: name)
      })
    let names = Events<String>()
    let tags = Events<[String]>()
    let computed = Events<Int>()
    let optionals = Events<String?>()
    let boxed = Events<String>()
    let tokens = [
      await core.subscribe(to: \.inner.name) { names.record($0) },
      await core.subscribe(to: \.inner.tags) { tags.record($0) },
      await core.subscribe(to: \.nameLength) { computed.record($0) },
      await core.subscribe(to: \.optional?.name) { optionals.record($0) },
      await core.subscribe(to: \.box.name) { boxed.record($0) },
    ]
    let observed = collect(await core.observe(\.inner.name))
    try await core.dispatch("first")
    try await core.dispatch("second one")
    await core.shutdown()
    #expect(names.all == ["", "first", "second one"])
    #expect(tags.all == [[], ["first"], ["first", "second one"]])
    #expect(computed.all == [0, 5, 10])
    #expect(optionals.all == [nil, "first", "second one"])
    #expect(boxed.all == ["", "first", "second one"])
    #expect(await observed.value.last == "second one")
    withExtendedLifetime(tokens) {}
  }

  @Test("one key path under both policies makes two groups: `.all` sees each action, `.latest` each batch")
  func policiesDoNotShare() async throws {
    let core = makeCounterCore()
    let every = Events<Int>()
    let latest = Events<Int>()
    let tokens = [
      await core.subscribe(to: \.count, buffering: .all) { every.record($0) },
      await core.subscribe(to: \.count) { latest.record($0) },
      await core.subscribe(to: \.count, buffering: .all) { every.record($0) },
    ]
    try await core.dispatch(contentsOf: [.increment, .increment])
    #expect(every.all == [0, 0, 1, 1, 2, 2])
    #expect(latest.all == [0, 2])
    withExtendedLifetime(tokens) {}
  }

  @Test("a member that ends leaves its group to the others; once all end the group goes, and a new one starts current")
  func membersLeaveAndGroupsEnd() async throws {
    let core = makeCounterCore()
    let first = Events<Int>()
    let second = Events<Int>()
    let one = await core.subscribe(to: \.count) { first.record($0) }
    var two: Subscriber? = await core.subscribe(to: \.count) { second.record($0) }
    try await core.dispatch(.increment)
    two = nil  // released: it leaves the group
    try await core.dispatch(.increment)
    #expect(first.all == [0, 1, 2])
    #expect(second.all == [0, 1])
    #expect(core.metrics.observers == 1)
    one.cancel()
    #expect(core.metrics.observers == 0)
    try await core.dispatch(.increment)
    let third = Events<Int>()
    let three = await core.subscribe(to: \.count) { third.record($0) }
    try await core.dispatch(.increment)
    #expect(third.all == [3, 4])
    #expect(first.all == [0, 1, 2])
    withExtendedLifetime((two, three)) {}
  }

  @Test("a subscriber that cancels another member of its group during a call stops that member's call")
  func cancelAnotherMemberMidPublication() async throws {
    let core = makeCounterCore()
    let victimCalls = Events<Int>()
    let victim = Events<Subscriber>()
    let killer = await core.subscribe(to: \.count) { count in
      if count == 1 { victim.all.first?.cancel() }
    }
    let subscribed = await core.subscribe(to: \.count) { victimCalls.record($0) }
    victim.record(subscribed)
    try await core.dispatch(.increment)
    try await core.dispatch(.increment)
    #expect(victimCalls.all == [0])
    #expect(!subscribed.isActive)
    withExtendedLifetime(killer) {}
  }

  @Test("observers of one key path each get their own first value and every change, and end apart")
  func observersShareAGroup() async throws {
    let core = makeCounterCore()
    let early = await core.observe(\.count, buffering: .all)
    try await core.dispatch(.increment)
    let late = await core.observe(\.count, buffering: .all)
    let earlyValues = collect(early)
    let lateValues = collect(late)
    try await core.dispatch(.increment)
    try await core.dispatch(.setLabel("unchanged count"))
    await core.shutdown()
    #expect(await earlyValues.value == [0, 1, 2])
    #expect(await lateValues.value == [1, 2])
  }
}

/// Counts reads of `Probed.tracked`.
final class Reads: Sendable {
  private let reads = Atomic<Int>(0)
  func add() { reads.add(1, ordering: .relaxed) }
  func reset() { reads.store(0, ordering: .relaxed) }
  var count: Int { reads.load(ordering: .relaxed) }
}

/// A value whose `==` counts its calls.
struct ComparisonCounted: Sendable, Equatable {
  var value: Int
  let comparisons: Reads

  static func == (lhs: ComparisonCounted, rhs: ComparisonCounted) -> Bool {
    lhs.comparisons.add()
    return lhs.value == rhs.value
  }
}

struct Compared: Sendable {
  var value: ComparisonCounted
}

struct Probed: Sendable {
  let reads: Reads
  var value = 0
  /// A computed property: reading it through its key path calls this.
  var tracked: Int {
    reads.add()
    return value
  }
}

struct Shapes: Sendable {
  struct Inner: Sendable, Equatable {
    var name = ""
    var tags: [String] = []
  }
  final class Box: Sendable {
    let name: String
    init(name: String) { self.name = name }
  }
  var padding = (1, 2, 3)
  var inner = Inner()
  var optional: Inner?
  var box = Box(name: "")
  var nameLength: Int { inner.name.count }
}
