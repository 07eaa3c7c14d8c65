import AsyncCore
import Testing

@Suite("CoreStream registration", .hangDetector)
struct CoreStreamTests {
  @Test("a core stream's Failure is inferred as Never: a loop over it needs no try")
  func failureIsNever() async throws {
    #expect(CoreStream<Int>.Failure.self == Never.self)
    let core = makeCounterCore()
    try await core.dispatch(.increment)
    for await count in await core.observe(\.count) {  // no `try`
      #expect(count == 1)
      break
    }
  }

  @Test("observers count from registration")
  func countsRegistrations() async {
    let core = makeCounterCore()
    let first = await core.states()
    let second = await core.observe(\.count)
    let third = await core.actions()
    #expect(core.metrics.observers == 3)
    withExtendedLifetime((first, second, third)) {}
  }

  @Test("breaking out of the loop unregisters the observer")
  func breakUnregisters() async throws {
    let core = makeCounterCore()
    let stream = await core.observe(\.count)  // held beyond the loop on purpose
    #expect(core.metrics.observers == 1)
    for await _ in stream { break }
    #expect(core.metrics.observers == 0)
    try await core.dispatch(.increment)  // publishing to an ended observer is harmless
    #expect(core.metrics.observers == 0)
  }

  @Test("cancelling the consuming task unregisters the observer")
  func cancelUnregisters() async throws {
    let core = makeCounterCore()
    let stream = await core.observe(\.count)
    let firstValue = AsyncStream<Int>.makeStream()
    let consumer = Task {
      var received: [Int] = []
      for await count in stream {
        received.append(count)
        firstValue.continuation.yield(count)
      }
      return received
    }
    // Wait until the consumer is inside its loop, then cancel it.
    var signals = firstValue.stream.makeAsyncIterator()
    #expect(await signals.next() == 0)
    consumer.cancel()
    #expect(await consumer.value == [0])
    #expect(core.metrics.observers == 0)
  }

  @Test("a cancelled consumer gets nil, not a buffered value")
  func cancelledConsumerEnds() async throws {
    let core = makeCounterCore()
    let stream = await core.observe(\.count)
    let consumer = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      var iterator = stream.makeAsyncIterator()
      return await iterator.next()
    }
    #expect(await consumer.value == nil)
    #expect(core.metrics.observers == 0)
  }

  @Test("dropping a stream that was never iterated unregisters the observer")
  func dropUnregisters() async {
    let core = makeCounterCore()
    do {
      let stream = await core.states()
      #expect(core.metrics.observers == 1)
      withExtendedLifetime(stream) {}
    }
    #expect(core.metrics.observers == 0)
  }

  @Test("an iterator that outlives its stream keeps observing")
  func iteratorOutlivesStream() async throws {
    let core = makeCounterCore()
    var iterator = await core.observe(\.count).makeAsyncIterator()
    #expect(core.metrics.observers == 1)
    #expect(await iterator.next() == 0)
    try await core.dispatch(.increment)
    #expect(await iterator.next() == 1)
    #expect(core.metrics.observers == 1)
  }

  @Test("ended observers' storage is released by the next publication")
  func endedObserversAreDropped() async throws {
    let core = makeCounterCore()
    for _ in 0..<10 { _ = await core.observe(\.count) }
    #expect(core.metrics.observers == 0)
    try await core.dispatch(.increment)
    let kept = collect(await core.observe(\.count))
    await core.shutdown()
    #expect(await kept.value == [1])
  }

  @Test("asyncStream() delivers the observer's values and unregisters when it ends")
  func asyncStreamForm() async throws {
    let core = makeCounterCore()
    let counts: AsyncStream<Int> = await core.observe(\.count, buffering: .all).asyncStream()
    #expect(core.metrics.observers == 1)
    let consumer = Task {
      var received: [Int] = []
      for await count in counts { received.append(count) }
      return received
    }
    for _ in 0..<3 { try await core.dispatch(.increment) }
    try await core.dispatch(.setLabel("not a count change"))
    await core.shutdown()
    #expect(await consumer.value == [0, 1, 2, 3])

    let other = makeCounterCore()
    do {
      let dropped = await other.states().asyncStream()
      #expect(other.metrics.observers == 1)
      withExtendedLifetime(dropped) {}
    }
    #expect(other.metrics.observers == 0)
  }

  @Test("a stream is consumed by one loop: iterating it twice stops the program")
  func secondIterationIsAProgrammerError() async {
    await #expect(processExitsWith: .failure) {
      let core = Core<Int, Int>(initialState: 0, reducer: Reduce { state, action in state += action })
      let stream = await core.states()
      _ = stream.makeAsyncIterator()
      _ = stream.makeAsyncIterator()
    }
  }

  @Test("a consumer on the main actor stays there")
  @MainActor
  func mainActorConsumer() async throws {
    let core = makeCounterCore()
    let stream = await core.observe(\.count, buffering: .all)
    try await core.dispatch(.increment)
    await core.shutdown()
    var received: [Int] = []
    for await count in stream {
      MainActor.assertIsolated()
      received.append(count)
    }
    #expect(received == [0, 1])
  }
}
