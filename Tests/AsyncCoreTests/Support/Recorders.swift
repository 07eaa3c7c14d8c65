// `Locked`, AsyncCore's mutex that ThreadSanitizer can see on Linux: test
// support shares state across tasks too, and a bare `Mutex` would be
// reported as racing under TSan.
@testable import AsyncCore

/// A thread-safe list of what happened, in order.
final class Events<Event: Sendable>: Sendable {
  private let events = Locked<[Event]>([])

  func record(_ event: Event) { events.withLock { $0.append(event) } }
  var all: [Event] { events.withLock { $0 } }
  func removeAll() { events.withLock { $0.removeAll() } }
}

/// Lets `parties` tasks through only once all of them have arrived: proof
/// that they run at the same time (sequential tasks would wait forever, and
/// the test's time limit would fail the test).
final class Barrier: Sendable {
  private struct State {
    var arrived = 0
    var waiting: [CheckedContinuation<Void, Never>] = []
  }

  private let parties: Int
  private let state = Locked(State())

  init(parties: Int) {
    self.parties = parties
  }

  func arriveAndWait() async {
    await withCheckedContinuation { continuation in
      let release = state.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.arrived += 1
        state.waiting.append(continuation)
        guard state.arrived == parties else { return [] }
        defer { state.waiting = [] }
        return state.waiting
      }
      for waiter in release { waiter.resume() }
    }
  }
}

/// A value shared between a test and the tasks it starts.
final class Box<Value: Sendable>: Sendable {
  private let storage: Locked<Value>
  init(_ value: Value) { storage = Locked(value) }
  func set(_ value: Value) { storage.withLock { $0 = value } }
  var value: Value { storage.withLock { $0 } }
}
