import Testing

@testable import AsyncCore

/// The effect queue's consumers and their parked waiters:
/// internal, so these tests reach it through `@testable import`.
@Suite("Effect queue consumers", .hangDetector)
struct EffectQueueTests {
  @Test("a replaced consumer's cancellation never takes its successor's waiter")
  func cancellationIsKeyedByConsumer() async throws {
    let queue = EffectQueue(lifecycle: Lifecycle())
    guard case .attached(let runner, nil) = queue.attach(asService: false) else {
      Issue.record("the runner did not attach")
      return
    }
    // Task.immediate runs up to the first suspension: the runner is parked.
    let runnerLoop = Task.immediate { await queue.next(for: runner) }
    guard case .attached(let service, _) = queue.attach(asService: true) else {
      Issue.record("run() did not attach")
      return
    }
    #expect(await runnerLoop.value == nil)  // replaced: its loop ends
    let serviceLoop = Task.immediate { await queue.next(for: service) }
    // The replaced runner's task is cancelled late (as the core's deinit
    // does): the service must stay parked and still receive the next job.
    runnerLoop.cancel()
    let stillRunning = Task.immediate { await queue.next(for: runner) }
    #expect(await stillRunning.value == nil)
    let registry = EffectRegistry(lifecycle: Lifecycle())
    let token = try #require(registry.register(ids: [], lineage: nil))
    let job = EffectJob(token: token, registry: registry, lineage: nil, priority: nil) { _ in }
    #expect(queue.enqueue(job))
    #expect(await serviceLoop.value?.map(\.token) == [token])
    job.abandon()
  }

  @Test("a second run() is refused while one consumes the queue")
  func secondServiceIsRefused() {
    let queue = EffectQueue(lifecycle: Lifecycle())
    guard case .attached = queue.attach(asService: true) else {
      Issue.record("run() did not attach")
      return
    }
    guard case .alreadyRunning = queue.attach(asService: true) else {
      Issue.record("a second run() attached")
      return
    }
    guard case .alreadyConsumed = queue.attach(asService: false) else {
      Issue.record("a runner replaced run()")
      return
    }
  }
}
