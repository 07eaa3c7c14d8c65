// `Locked`, AsyncCore's mutex that ThreadSanitizer can see on Linux (see
// Recorders.swift).
@testable import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Values that effects and tasks emit for a test to await, in order.
///
/// Awaiting is cancellable: a value that never comes (an effect stuck in a
/// call that should have returned) fails the test at its time limit instead
/// of hanging the test process.
final class Signal<Value: Sendable>: Sendable {
  private let stream: AsyncStream<Value>
  private let continuation: AsyncStream<Value>.Continuation

  init() {
    (stream, continuation) = AsyncStream.makeStream()
  }

  /// Callable from synchronous code, a reducer included.
  func emit(_ value: Value) {
    continuation.yield(value)
  }

  /// The next value emitted, or `nil` if the waiting task was cancelled.
  func next() async -> Value? {
    // Every iterator of one `AsyncStream` shares its buffer, so one made per
    // call takes the values in order; only one task awaits at a time.
    var iterator = stream.makeAsyncIterator()
    return await iterator.next()
  }
}

extension Signal where Value == Void {
  func emit() { emit(()) }
}

/// A one-way door effects wait at until the test opens it.
///
/// The wait is not cancellable on purpose: an effect cancelled by a shutdown
/// stays in its cancellation handler until the test lets it end, which is
/// how a test proves that a call waited for it.
final class Gate: Sendable {
  private struct State {
    var isOpen = false
    var waiting: [CheckedContinuation<Void, Never>] = []
  }

  private let state = Locked(State())

  var isOpen: Bool { state.withLock { $0.isOpen } }

  func open() {
    let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.isOpen = true
      defer { state.waiting = [] }
      return state.waiting
    }
    for waiter in waiting { waiter.resume() }
  }

  func wait() async {
    await withCheckedContinuation { continuation in
      let isOpen = state.withLock { state -> Bool in
        if !state.isOpen { state.waiting.append(continuation) }
        return state.isOpen
      }
      if isOpen { continuation.resume() }
    }
  }

  /// Blocks the calling thread until the door opens, for a reducer that must
  /// hold its core busy; gives up after `limit` (returning `false`) so a
  /// failed test cannot hold a thread forever.
  ///
  /// It sleeps 100 µs between looks rather than spinning: the thread it
  /// holds is one of the concurrency pool's few (two on a two-core
  /// machine), and a spin also took a whole core from the thread left to
  /// run the rest of the suite, the task that opens the door included.
  /// Under ThreadSanitizer that stalled the suite for the full 30 s.
  func spinUntilOpen(limit: Duration = .seconds(30)) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: limit)
    while !isOpen {
      if ContinuousClock.now >= deadline { return false }
      var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
      nanosleep(&pause, nil)
    }
    return true
  }
}

/// Yields until `condition` holds, for a flag the core sets synchronously
/// (`hasShutDown`) that has no awaitable signal. Returns `false` if the
/// task was cancelled first (the test's time limit).
func yieldUntil(_ condition: () -> Bool) async -> Bool {
  while !condition() {
    if Task.isCancelled { return false }
    await Task.yield()
  }
  return true
}

/// A weak hold on an object set after it is made: how a reducer or effect in
/// these tests reaches its own core without a reference cycle (which
/// LeakSanitizer would report).
final class WeakBox<Object: AnyObject & Sendable>: Sendable {
  private struct Slot {
    weak var object: Object?
  }

  private let slot = Locked(Slot())

  init() {}

  func set(_ object: Object) { slot.withLock { $0.object = object } }
  var object: Object? { slot.withLock { $0.object } }
}
