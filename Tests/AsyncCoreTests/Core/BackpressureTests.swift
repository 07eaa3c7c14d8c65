import AsyncCoreProcessTestSupport
import Synchronization
import Testing

@testable import AsyncCore

/// A core made with a `mailboxCapacity`: `send` reports a full mailbox,
/// `enqueue` waits for room, shutdown ends the wait, and nothing accepted
/// is lost. (The instants of admission, cancellation and refusal are pinned
/// below, on the mailbox driven by hand.)
@Suite("Backpressure: a bounded mailbox", .hangDetector)
struct BackpressureTests {
  enum Action: Sendable, Equatable {
    case value(Int)
    case sequenced(producer: Int, sequence: Int)
  }

  /// How many actions each producer had accepted.
  final class AcceptedCounts: Sendable {
    // `Locked`, not `Mutex`: ThreadSanitizer sees its critical sections.
    private let counts: Locked<[Int]>
    init(producers: Int) { counts = Locked(Array(repeating: 0, count: producers)) }
    func set(_ producer: Int, _ count: Int) { counts.withLock { $0[producer] = count } }
    var all: [Int] { counts.withLock { $0 } }
  }

  struct Log: Sendable, Equatable {
    var values: [Int] = []
    var count = 0
    var lastSequence: [Int] = Array(repeating: -1, count: 8)
    var outOfOrder = 0
  }

  static func makeCore(capacity: Int?) -> Core<Log, Action> {
    Core(
      initialState: Log(), mailboxCapacity: capacity,
      reducer: Reduce { state, action in
        switch action {
        case .value(let value):
          state.values.append(value)
        case .sequenced(let producer, let sequence):
          if sequence != state.lastSequence[producer] + 1 { state.outOfOrder += 1 }
          state.lastSequence[producer] = sequence
          state.count += 1
        }
      })
  }

  @Test("8 producers send into a mailbox of 64: some are .mailboxFull; exactly the accepted are reduced, in order")
  func sendReportsAFullMailbox() async {
    let producers = 8
    let perProducer = Environment.sanitizer == nil ? 50_000 : 10_000
    let core = Self.makeCore(capacity: 64)
    let results = await withTaskGroup(of: (accepted: Int, full: Int).self) { group in
      for producer in 0..<producers {
        group.addTask {
          var accepted = 0
          var full = 0
          for _ in 0..<perProducer {
            switch core.send(.sequenced(producer: producer, sequence: accepted)) {
            case .accepted: accepted += 1
            case .mailboxFull: full += 1
            case .shutDown, .childRemoved, .effectCancelled, .effectEnded: Issue.record("refused on a running core")
            }
          }
          return (accepted, full)
        }
      }
      return await group.reduce(into: [(accepted: Int, full: Int)]()) { $0.append($1) }
    }
    let accepted = results.map(\.accepted).reduce(0, +)
    let full = results.map(\.full).reduce(0, +)
    #expect(accepted + full == producers * perProducer)
    #expect(full > 0, "8 producers outrun one reducer: the mailbox of 64 fills")
    let log = await core.state
    #expect(log.count == accepted)
    #expect(log.outOfOrder == 0)
    #expect(core.metrics.queueHighWaterMark <= 64)
    #expect(core.metrics.queueDepth == 0)
    // More than the capacity at once is never accepted, even when empty.
    #expect(core.send(contentsOf: (0..<65).map { Action.sequenced(producer: 0, sequence: $0) }) == .mailboxFull)
  }

  @Test("8 producers × 100,000 enqueue into a mailbox of 64: all reduced, each in order, depth never above 64")
  func floodThroughASmallMailbox() async throws {
    let producers = 8
    // A quarter under a sanitizer, where every access costs several times more.
    let perProducer = Environment.sanitizer == nil ? 100_000 : 25_000
    let core = Self.makeCore(capacity: 64)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for producer in 0..<producers {
        group.addTask {
          for sequence in 0..<perProducer {
            try await core.enqueue(.sequenced(producer: producer, sequence: sequence))
          }
        }
      }
      try await group.waitForAll()
    }
    let log = await core.state
    #expect(log.count == producers * perProducer)
    #expect(log.outOfOrder == 0)
    #expect(log.lastSequence == Array(repeating: perProducer - 1, count: producers))
    let metrics = core.metrics
    #expect(metrics.queueHighWaterMark <= 64)
    #expect(metrics.queueHighWaterMark == 64, "the producers outrun the reducer: the mailbox filled")
    #expect(metrics.waitingSenders == 0)
    #expect(metrics.actionsReduced == producers * perProducer)
  }

  @Test("shutdown mid-flood through enqueue: every producer refused with .shutDown, every accepted action reduced")
  func shutdownMidFlood() async throws {
    let producers = 8
    let core = Self.makeCore(capacity: 64)
    let accepted = AcceptedCounts(producers: producers)
    let flood = Task {
      await withTaskGroup(of: Void.self) { group in
        for producer in 0..<producers {
          group.addTask {
            var sequence = 0
            while true {
              do {
                try await core.enqueue(.sequenced(producer: producer, sequence: sequence))
              } catch {
                #expect(error as? CoreError == .shutDown)
                return
              }
              accepted.set(producer, sequence + 1)
              sequence += 1
            }
          }
        }
      }
    }
    #expect(await yieldUntil { core.metrics.actionsReduced >= 20_000 && core.metrics.waitingSenders > 0 })
    await core.shutdown()
    await flood.value
    let log = await core.state
    let counts = accepted.all
    #expect(log.lastSequence == counts.map { $0 - 1 })
    #expect(log.count == counts.reduce(0, +))
    #expect(log.outOfOrder == 0)
    #expect(core.metrics.waitingSenders == 0)
  }

  @Test("an effect's follow-ups are accepted even when the mailbox is full: 10,000 into a mailbox of 1, all reduced")
  func followUpsAreNotHeldBack() async throws {
    let refused = Tally()
    let core = Core<Int, Int>(initialState: 0, mailboxCapacity: 1) { state, action in
      if action == 0 {
        return .run { send in
          for _ in 0..<10_000 where await send(1) != .accepted { refused.add() }
        }
      }
      state += action
      return .none
    }
    try await core.dispatch(0).finish()
    #expect(refused.value == 0)
    #expect(await core.state == 10_000)
    #expect(core.metrics.queueDepth == 0)
  }
}

/// The mailbox's storage driven by hand, with no core and no drain: the
/// test takes batches and reports what it "reduced", so each admission,
/// cancellation and refusal happens at a chosen instant.
@Suite("Backpressure: waiting for room in the mailbox", .hangDetector)
struct MailboxWaitingTests {
  /// A mailbox of `capacity` holding `1...capacity`, with a drain
  /// "scheduled" (the test is the drain).
  static func fullMailbox(capacity: Int) -> (Mailbox<Int>, Lifecycle) {
    let lifecycle = Lifecycle()
    let mailbox = Mailbox<Int>(lifecycle: lifecycle, capacity: capacity)
    for value in 1...capacity { _ = mailbox.send(value, fromEffect: false) }
    return (mailbox, lifecycle)
  }

  /// Starts a task waiting to send `value`, and returns once it waits.
  static func waiter(_ mailbox: Mailbox<Int>, _ value: Int) async -> Task<MailboxSendAction, any Error> {
    let before = mailbox.figures.waiting
    let task = Task { try await mailbox.waitForRoom(value) }
    #expect(await yieldUntil { mailbox.figures.waiting == before + 1 })
    return task
  }

  /// Reports `reported` elements reduced, then takes what is pending.
  static func take(_ mailbox: Mailbox<Int>, reported: Int) -> [Int] {
    if reported > 0 { mailbox.report(reduced: reported) }
    var spare: [Int] = []
    return mailbox.takeBatch(from: &spare, stayingScheduled: true, pendingIfOver: .max) ?? []
  }

  @Test("waiters are admitted oldest first, as room is reported; send and enqueue do not overtake them")
  func admittedInOrder() async throws {
    let (mailbox, _) = Self.fullMailbox(capacity: 2)
    var waiters: [Task<MailboxSendAction, any Error>] = []
    for value in 10..<15 { waiters.append(await Self.waiter(mailbox, value)) }
    #expect(mailbox.send(99, fromEffect: false) == .full, "five senders wait: send must not overtake them")
    #expect(Self.take(mailbox, reported: 0) == [1, 2], "taken, not yet reduced: no room made")
    #expect(mailbox.figures.waiting == 5)
    #expect(Self.take(mailbox, reported: 2) == [10, 11])
    #expect(try await waiters[0].value == .enqueued)
    #expect(try await waiters[1].value == .enqueued)
    #expect(mailbox.send(98, fromEffect: false) == .full, "three still wait")
    #expect(Self.take(mailbox, reported: 2) == [12, 13])
    #expect(Self.take(mailbox, reported: 2) == [14])
    for waiter in waiters { _ = try await waiter.value }
    #expect(mailbox.figures.waiting == 0)
    #expect(mailbox.figures.depth == 1)
    #expect(mailbox.figures.highWaterMark == 2)
  }

  @Test("a cancelled waiter leaves at once with CancellationError, and its element is never queued")
  func cancelledWaiterLeaves() async throws {
    let (mailbox, _) = Self.fullMailbox(capacity: 1)
    let first = await Self.waiter(mailbox, 10)
    let second = await Self.waiter(mailbox, 11)
    first.cancel()
    await #expect(throws: CancellationError.self) { try await first.value }
    #expect(mailbox.figures.waiting == 1)
    #expect(Self.take(mailbox, reported: 0) == [1])
    #expect(Self.take(mailbox, reported: 1) == [11])
    _ = try await second.value
  }

  @Test("a task cancelled before it calls is refused with CancellationError only when it would wait")
  func cancelledBeforeTheCall() async throws {
    let lifecycle = Lifecycle()
    let mailbox = Mailbox<Int>(lifecycle: lifecycle, capacity: 1)
    let roomy = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await mailbox.waitForRoom(1)
    }
    #expect(try await roomy.value == .startDrain, "room: queued, like send")
    let full = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await mailbox.waitForRoom(2)
    }
    await #expect(throws: CancellationError.self) { try await full.value }
    #expect(mailbox.figures.waiting == 0)
    #expect(Self.take(mailbox, reported: 0) == [1])
    #expect(Self.take(mailbox, reported: 1) == [])
  }

  @Test("shutdown refuses every waiter with CoreError.shutDown; a report after shutdown admits none")
  func shutdownRefusesWaiters() async throws {
    let (mailbox, lifecycle) = Self.fullMailbox(capacity: 1)
    let waiters = [await Self.waiter(mailbox, 10), await Self.waiter(mailbox, 11)]
    _ = lifecycle.shutdown(.graceful)
    mailbox.refuseWaiters()
    for waiter in waiters { await #expect(throws: CoreError.shutDown) { try await waiter.value } }
    await #expect(throws: CoreError.shutDown) { try await mailbox.waitForRoom(12) }
    #expect(Self.take(mailbox, reported: 0) == [1], "what was accepted before is still handed over")

    // A waiter still registered when the gates close is refused by the
    // next report rather than admitted.
    let (other, otherLifecycle) = Self.fullMailbox(capacity: 1)
    let late = await Self.waiter(other, 20)
    _ = otherLifecycle.shutdown(.graceful)
    #expect(Self.take(other, reported: 1) == [1])
    await #expect(throws: CoreError.shutDown) { try await late.value }
  }
}

@Suite("Load metrics")
struct LoadMetricsTests {
  @Test("actionsReduced counts sent, dispatched and .send effects' actions; a slice and the depth are counted")
  func metricsCountTheLoad() async throws {
    let core = Core<Int, Int>(initialState: 0) { state, action in
      state += action
      return action == 10 ? .send(1) : .none
    }
    #expect(core.metrics.actionsReduced == 0 && core.metrics.drainSlices == 0)
    try await core.dispatch(2)
    #expect(core.metrics.actionsReduced == 1)
    try await core.dispatch(10)
    #expect(core.metrics.actionsReduced == 3, "the dispatched action and the one its .send effect returned")
    try await core.dispatch(contentsOf: [1, 1])
    #expect(core.metrics.actionsReduced == 5)
    core.send(contentsOf: Array(repeating: 1, count: 100))
    #expect(core.metrics.queueHighWaterMark == 100)
    #expect(await core.state == 2 + 11 + 2 + 100)
    #expect(core.metrics.actionsReduced == 105)
    #expect(core.metrics.queueDepth == 0)
    #expect(core.metrics.waitingSenders == 0)
  }

  @Test("the drain counts one slice per batch it reduces")
  func drainCountsSlices() async {
    let core = Core<Int, Int>(initialState: 0, reducer: Reduce { state, action in state += action })
    let reached = Signal<Void>()
    let total = Core<Int, Int>.drainSlice * 2 + 10
    let subscriber = await core.subscribe(to: \.self) { value in if value == total { reached.emit() } }
    core.send(contentsOf: Array(repeating: 1, count: total))
    await reached.next()
    #expect(core.metrics.drainSlices == 3)
    #expect(core.metrics.actionsReduced == total)
    withExtendedLifetime(subscriber) {}
  }
}

@Suite("Backpressure: sends from inside the core")
struct InsideSendTests {
  enum Action: Sendable, Equatable { case trigger, derived }

  @Test("a middleware's context.send is never refused by a full mailbox: 100 from one action into a capacity of 1")
  func middlewareSendsPassAFullMailbox() async throws {
    let core = Core<Int, Action>(
      initialState: 0, mailboxCapacity: 1,
      reducer: Reduce { state, action in if action == .derived { state += 1 } })
    let results = Events<SendResult>()
    await core.addMiddleware { action, _, context in
      if action == .trigger { for _ in 0..<100 { results.record(context.send(.derived)) } }
      return .pass
    }
    try await core.dispatch(.trigger)
    #expect(results.all == Array(repeating: .accepted, count: 100))
    #expect(await core.state == 100)
    #expect(core.metrics.queueHighWaterMark == 100, "the middleware's actions count past the capacity")
  }
}

@Suite("Load metrics: reading takes no lock")
struct MetricsLockTests {
  @Test("the queue's figures are read while the mailbox's lock is held: a reader never waits on a sender")
  func metricsTakeNoMailboxLock() async {
    let core = Core<Int, Int>(initialState: 0, mailboxCapacity: 8, reducer: Reduce { state, action in state += action })
    core.send(contentsOf: [1, 2, 3])
    // A reader that took the lock would deadlock here (the lock is not
    // reentrant), and the time limit would fail the test.
    let mailbox = await core.mailbox
    let metrics = mailbox.machine.withLock { _ in core.metrics }
    #expect(metrics.queueDepth <= 3 && metrics.queueHighWaterMark <= 3)
    #expect(await core.state == 6)
  }
}
