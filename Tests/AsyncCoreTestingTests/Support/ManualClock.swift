// PENDING(i9-core): a copy of Tests/AsyncCoreTests/Support/ManualClock.swift,
// with `advance(by:)` async as the public `ManualClock` of AsyncCore will
// have it. Delete this file when that lands (the tests call the same names,
// except `waitForSleepers(_:)`: rename it to the public one's name).
@testable import AsyncCore  // Locked, AsyncCore's mutex that ThreadSanitizer sees

/// A clock that moves only when a test advances it. `waitForSleepers(_:)`
/// is the signal a test waits on before advancing: no real-time sleeps.
final class ManualClock: Clock, Sendable {
  struct Instant: InstantProtocol {
    let offset: Duration

    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct Sleeper {
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var nextID = 0
    var sleepers: [Int: Sleeper] = [:]
    var countWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    mutating func satisfiedCountWaiters() -> [CheckedContinuation<Void, Never>] {
      let ready = countWaiters.filter { $0.count <= sleepers.count }.map(\.continuation)
      countWaiters.removeAll { $0.count <= sleepers.count }
      return ready
    }
  }

  private let state = Locked(State())

  var now: Instant { state.withLock { $0.now } }
  var minimumResolution: Duration { .zero }

  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    let id = state.withLock { state in
      state.nextID += 1
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let (immediate, ready) = state.withLock {
          state -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
          if Task.isCancelled { return (.failure(CancellationError()), []) }
          if deadline <= state.now { return (.success(()), []) }
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return (nil, state.satisfiedCountWaiters())
        }
        if let immediate { continuation.resume(with: immediate) }
        for waiter in ready { waiter.resume() }
      }
    } onCancel: {
      state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward, waking every sleeper whose deadline has come.
  func advance(by duration: Duration) async {
    let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
      state.now = state.now.advanced(by: duration)
      let due = state.sleepers.filter { $0.value.deadline <= state.now }
      for id in due.keys { state.sleepers[id] = nil }
      return due.values.sorted { $0.deadline < $1.deadline }.map(\.continuation)
    }
    for continuation in due { continuation.resume() }
  }

  /// Returns once at least `count` tasks are asleep on this clock.
  func waitForSleepers(_ count: Int) async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool in
        guard state.sleepers.count < count else { return true }
        state.countWaiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }
}
