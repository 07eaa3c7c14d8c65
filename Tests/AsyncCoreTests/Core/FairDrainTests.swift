import Synchronization
import Testing

@testable import AsyncCore

/// The drain under a flood of `send`: it reduces a bounded slice at a time,
/// so the core's other callers get their turns while producers never stop.
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

  @Test("awaited reads and observe/cancel cycles complete while 8 producers flood send, and every send is reduced")
  func callersGetTurnsUnderAFlood() async {
    let core = makeCounterCore()
    let stop = Stop()
    let sent = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<Self.producers {
        group.addTask {
          var sent = 0
          while !stop.isSet {
            // A yield now and then only so that the test's own tasks get a
            // thread of the pool at all: the core must do the rest.
            for _ in 0..<1_000 where core.send(.increment) { sent += 1 }
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
    #expect(core.send(contentsOf: Array(repeating: .increment, count: 3 * slice)))
    await reachedTheEnd.next()
    #expect(counts.all == [0, slice, 2 * slice, 3 * slice])
    withExtendedLifetime(subscriber) {}
  }
}
