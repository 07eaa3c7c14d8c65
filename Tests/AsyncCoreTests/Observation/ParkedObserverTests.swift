import Synchronization
import Testing

@testable import AsyncCore

/// Observers of one key path share a group. One consumer's
/// end must not disturb the others parked beside it, and an observer
/// registered after one left must not answer to the consumer that left.
@Suite("Parked observers of one key path", .hangDetector)
struct ParkedObserverTests {
  @Test(
    "cancelling parked consumers one by one ends each at once, with no publication; the one left gets the next value",
    arguments: [0, 2, 4])
  func cancelParkedOneByOne(survivor: Int) async throws {
    let core = makeCounterCore()
    let received = (0..<5).map { _ in Signal<Int>() }
    var consumers: [Task<Void, Never>] = []
    for index in 0..<5 {
      let counts = await core.observe(\.count)
      let signal = received[index]
      consumers.append(Task { for await count in counts { signal.emit(count) } })
    }
    for signal in received { #expect(await signal.next() == 0) }
    #expect(await core.waitUntilParked(5, at: \.count))

    var left = 5
    for index in 0..<5 where index != survivor {
      consumers[index].cancel()
      await consumers[index].value  // ends without any publication
      left -= 1
      #expect(core.metrics.observers == left)
      #expect(await core.parkedCount(at: \.count) == left)
    }
    try await core.dispatch(.increment)
    #expect(await received[survivor].next() == 1)
    await core.shutdown()
    await consumers[survivor].value
  }

  @Test("a consumer that left keeps answering nil after a newcomer registers; the newcomer is unaffected")
  func staleConsumerAfterReuse() async throws {
    let core = makeCounterCore()
    let first = await core.observe(\.count)
    let left = Signal<[Int?]>()
    let newcomerReady = Gate()
    // The first consumer ends by cancellation but keeps its iterator, and
    // calls it again once a newcomer has taken its place.
    let old = Task {
      var iterator = first.makeAsyncIterator()
      let initial = await iterator.next()
      withUnsafeCurrentTask { $0?.cancel() }
      left.emit([initial, await iterator.next()])
      await newcomerReady.wait()
      return await iterator.next()
    }
    #expect(await left.next() == [0, nil])
    #expect(core.metrics.observers == 0)

    let second = await core.observe(\.count)
    #expect(core.metrics.observers == 1)
    try await core.dispatch(.increment)
    newcomerReady.open()
    #expect(await old.value == nil)  // the old consumer stays ended…
    #expect(core.metrics.observers == 1)  // …and does not count the newcomer out
    var iterator = second.makeAsyncIterator()
    #expect(await iterator.next() == 1)
  }

  @Test("observers registered between publications start at the current value, and a busy one skips to the newest")
  func joinersAndSkippers() async throws {
    let core = makeCounterCore()
    let early = await core.observe(\.count)
    var earlyIterator = early.makeAsyncIterator()
    #expect(await earlyIterator.next() == 0)
    for _ in 0..<3 { try await core.dispatch(.increment) }
    let late = await core.observe(\.count)
    var lateIterator = late.makeAsyncIterator()
    #expect(await lateIterator.next() == 3)
    #expect(await earlyIterator.next() == 3)  // skipped 1 and 2
    try await core.dispatch(.increment)
    #expect(await earlyIterator.next() == 4)
    #expect(await lateIterator.next() == 4)
  }
}

extension Core {
  /// The consumers of `keyPath`'s `.latest` observers parked, waiting for a
  /// newer value.
  fileprivate func parkedCount<Props: Sendable>(at keyPath: KeyPath<State, Props>) -> Int {
    let key = SelectionKey(keyPath: keyPath, policy: .latest, isSubscriber: false)
    guard let group = observers.groupsByKey[key] as? SelectionGroup<State, AsyncCore.Observer<Props>> else { return 0 }
    return group.members.filter { member in member.machine.withLock { $0.waiter != nil } }.count
  }

  /// Yields until `count` consumers of `keyPath` are parked; `false` if the
  /// waiting task was cancelled first (the test's time limit).
  fileprivate func waitUntilParked<Props: Sendable>(_ count: Int, at keyPath: KeyPath<State, Props>) async -> Bool {
    while parkedCount(at: keyPath) < count {
      if Task.isCancelled { return false }
      await Task.yield()
    }
    return true
  }
}
