import Synchronization

// The workload every contender runs: a counter reducer the optimiser cannot
// remove, over a 48-byte state. What each baseline stands for is written
// into the report from Brief.swift.

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
  func states(
    bufferingPolicy: AsyncStream<BenchState>.Continuation.BufferingPolicy = .bufferingNewest(1)
  ) -> AsyncStream<BenchState> {
    let (stream, continuation) = AsyncStream.makeStream(of: BenchState.self, bufferingPolicy: bufferingPolicy)
    continuation.yield(state)
    observers.append(continuation)
    return stream
  }

  func finish() {
    for observer in observers { observer.finish() }
    observers = []
  }
}

/// One latest-value cell shared by every observer: publishing stores the
/// state and resumes the parked observers directly (the reference design
/// for `for await` fan-out).
final class SharedCellStore: Sendable {
  private struct Cell {
    var state = BenchState()
    var version = 0
    var waiters: [UnsafeContinuation<(BenchState, Int)?, Never>] = []
    var isFinished = false
  }

  private let cell = Mutex(Cell())

  func dispatch(_ action: BenchAction) {
    let (waiters, state, version) = cell.withLock { cell in
      benchReduce(&cell.state, action)
      cell.version += 1
      defer { cell.waiters = [] }
      return (cell.waiters, cell.state, cell.version)
    }
    for waiter in waiters { waiter.resume(returning: (state, version)) }
  }

  /// The state once its version is newer than `version`; nil once finished.
  func next(after version: Int) async -> (BenchState, Int)? {
    await withUnsafeContinuation { continuation in
      let ready: (BenchState, Int)?? = cell.withLock { cell in
        if cell.version > version { return .some((cell.state, cell.version)) }
        if cell.isFinished { return .some(nil) }
        cell.waiters.append(continuation)
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  func finish() {
    let waiters = cell.withLock { cell in
      cell.isFinished = true
      defer { cell.waiters = [] }
      return cell.waiters
    }
    for waiter in waiters { waiter.resume(returning: nil) }
  }

  /// A consumer task calling `body` with each count it sees, until finished.
  func observe(_ body: @escaping @Sendable (Int) -> Void) -> Task<Int, Never> {
    Task.detached {
      var version = 0
      var received = 0
      while let (state, newVersion) = await self.next(after: version) {
        version = newVersion
        received += 1
        body(state.count)
      }
      return received
    }
  }
}

/// An actor that calls its callbacks inside itself after each action: what
/// a synchronous subscriber can cost at least (the in-run "callbacks inside
/// an actor" baseline).
actor CallbackActorStore {
  private var state = BenchState()
  private var callbacks: [@Sendable (Int) -> Void] = []

  func dispatch(_ action: BenchAction) {
    benchReduce(&state, action)
    for callback in callbacks { callback(state.count) }
  }

  func subscribe(_ callback: @escaping @Sendable (Int) -> Void) {
    callbacks.append(callback)
    callback(state.count)
  }
}
