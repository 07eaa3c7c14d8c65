import Synchronization

// The workload every contender runs, as in ../shared/PERFORMANCE.md: a
// counter reducer the optimiser cannot remove, over a 48-byte state.

struct BenchState: Sendable, Equatable {
  var count = 0
  var padding: (Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0)

  static func == (lhs: Self, rhs: Self) -> Bool { lhs.count == rhs.count }
}

enum BenchAction: Sendable {
  case increment
}

@inline(never)
func benchReduce(_ state: inout BenchState, _ action: BenchAction) {
  switch action {
  case .increment: state.count &+= 1
  }
}

/// Keeps `value` alive in the optimiser's eyes.
@inline(never)
func blackHole<T>(_ value: T) {
  withExtendedLifetime(value) {}
}

// MARK: - Baseline designs

/// The synchronous limit: state behind a `Mutex`, callbacks called in line
/// with every state.
final class MutexStore: Sendable {
  private let state = Mutex(BenchState())
  private let callbacks: [@Sendable (BenchState) -> Void]

  init(callbacks: [@Sendable (BenchState) -> Void] = []) {
    self.callbacks = callbacks
  }

  func dispatch(_ action: BenchAction) {
    let newState = state.withLock { state in
      benchReduce(&state, action)
      return state
    }
    for callback in callbacks { callback(newState) }
  }
}

/// The naive actor: `await dispatch` and one `AsyncStream` per observer.
actor PlainActorStore {
  private var state = BenchState()
  private var observers: [AsyncStream<BenchState>.Continuation] = []

  func dispatch(_ action: BenchAction) {
    benchReduce(&state, action)
    for observer in observers { observer.yield(state) }
  }

  /// One `AsyncStream` per observer, newest value only: the stream a
  /// plain design hands out.
  func states() -> AsyncStream<BenchState> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: BenchState.self, bufferingPolicy: .bufferingNewest(1))
    continuation.yield(state)
    observers.append(continuation)
    return stream
  }

  func finish() {
    for observer in observers { observer.finish() }
    observers = []
  }
}
