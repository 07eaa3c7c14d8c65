import Synchronization
import Testing

@testable import AsyncCore

/// The drain under a flood of `send`: it reduces a bounded slice at a time,
/// publishing after each and releasing what it reduced, while nothing is
/// lost and awaited reads stay in order.
@Suite("Fair drain under a flood of sends", .hangDetector)
struct FairDrainTests {
  static let producers = 8
  static let reads = 1_000
  static let observeCycles = 100

  /// Whether the prober is done: the producers flood until then.
  final class Stop: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
  }

  // What this checks is what a flood must never break; it does not pin the
  // slicing (`state` and `observe` reduce the whole backlog themselves, so a
  // slice changes when they get the core, not what they see):
  // `burstIsReducedSliceBySlice` does.
  @Test("every send is reduced, and awaited reads and observers' first values never go back, while 8 producers flood")
  func everySendReducedAndReadsMonotonicUnderAFlood() async {
    let core = makeCounterCore()
    let stop = Stop()
    let sent = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<Self.producers {
        group.addTask {
          var sent = 0
          while !stop.isSet {
            // A yield now and then only so that the test's own tasks get a
            // thread of the pool at all: the core must do the rest.
            for _ in 0..<1_000 where core.send(.increment) == .accepted { sent += 1 }
            await Task.yield()
          }
          return sent
        }
      }
      group.addTask {
        var lastCount = 0
        for _ in 0..<Self.reads {
          let count = await core.state.count
          #expect(count >= lastCount)
          lastCount = count
        }
        for _ in 0..<Self.observeCycles {
          let counts = await core.observe(\.count)
          for await count in counts {
            #expect(count >= lastCount)
            break
          }
        }
        stop.set()
        return 0
      }
      return await group.reduce(0, +)
    }
    #expect(await core.state.count == sent)
  }

  @Test("a burst of three slices is reduced slice by slice, and published once per slice")
  func burstIsReducedSliceBySlice() async {
    let slice = CounterCore.drainSlice
    let core = makeCounterCore()
    let counts = Events<Int>()
    let reachedTheEnd = Signal<Void>()
    let subscriber = await core.subscribe(to: \.count) { count in
      counts.record(count)
      if count == 3 * slice { reachedTheEnd.emit() }
    }
    // One send: the drain's first take finds all of it pending. Nothing
    // else reaches the core until the subscriber has seen the end.
    #expect(core.send(contentsOf: Array(repeating: .increment, count: 3 * slice)) == .accepted)
    await reachedTheEnd.next()
    #expect(counts.all == [0, slice, 2 * slice, 3 * slice])
    withExtendedLifetime(subscriber) {}
  }

  enum Carried: Sendable {
    case start
    case token(LiveToken)
  }

  @Test("the actions of each slice are released once it is reduced: at a slice's publication only those pending live")
  func reducedSlicesAreReleased() async {
    let slice = CounterCore.drainSlice
    let total = 2 * slice + 100
    let tokens = LiveTokens()
    let core = Core<Int, Carried>(initialState: 0, reducer: Reduce { count, _ in count += 1 })
    let aliveAtSlices = Events<Int>()
    let reachedTheEnd = Signal<Void>()
    let subscriber = await core.subscribe(to: \.self) { [weak core] count in
      // Sent from the core itself: the drain cannot start before the
      // burst's only references are the queued ones.
      if count == 1 { _ = core?.send(contentsOf: tokens.make(total).map { .token($0) }) }
      if count == 1 + slice || count == 1 + 2 * slice { aliveAtSlices.record(tokens.count) }
      if count == 1 + total { reachedTheEnd.emit() }
    }
    _ = try? await core.dispatch(.start)
    await reachedTheEnd.next()
    #expect(aliveAtSlices.all == [total - slice, total - 2 * slice])
    withExtendedLifetime(subscriber) {}
  }

  @Test("what the drain holds back between slices is reduced before later sends, by the drain and by a caller's read")
  func heldBackSlicesPrecedeLaterSends() async {
    let slice = CounterCore.drainSlice
    let total = 2 * slice + 100
    let core = Core<[Int], Int>(initialState: [], reducer: Reduce { log, value in log.append(value) })
    let firstSlice = Signal<Void>()
    let subscriber = await core.subscribe(to: \.count) { [weak core] count in
      // The drain holds the rest of the burst here: this send queues behind it.
      if count == slice {
        _ = core?.send(-1)
        firstSlice.emit()
      }
    }
    #expect(core.send(contentsOf: Array(0..<total)) == .accepted)
    await firstSlice.next()
    // Whether this read finds the rest of the burst held back or already
    // reduced, it reads its own write last, and everything in order.
    #expect(core.send(-2) == .accepted)
    #expect(await core.state == Array(0..<total) + [-1, -2])
    withExtendedLifetime(subscriber) {}
  }
}
