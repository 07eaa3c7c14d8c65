import AsyncCoreTesting
import Testing

@testable import AsyncCore  // Locked

/// An issue as a test of the testing library expects it: the message and
/// the line it is recorded at.
struct ExpectedIssue: Sendable, Equatable, CustomStringConvertible {
  let message: String
  let line: Int

  init(_ failure: TestCoreFailure, line: Int) {
    self.message = failure.description
    self.line = line
  }

  init(message: String, line: Int) {
    self.message = message
    self.line = line
  }

  var description: String { "line \(line): \(message)" }
}

/// Runs `body` as a known issue and checks that it recorded exactly
/// `expected`, in order, each with its message and line (in this file).
func expectIssues(
  _ expected: @autoclosure () -> [ExpectedIssue],
  sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () async -> Void
) async {
  let recorded = Recorded<ExpectedIssue>()
  await withKnownIssue(sourceLocation: sourceLocation) {
    await body()
  } matching: { issue in
    recorded.append(
      ExpectedIssue(
        message: issue.comments.map(\.rawValue).joined(separator: "\n"),
        line: issue.sourceLocation?.line ?? -1))
    return true
  }
  #expect(recorded.all == expected(), sourceLocation: sourceLocation)
}

/// A thread-safe list, in order.
final class Recorded<Element: Sendable>: Sendable {
  private let elements = Locked<[Element]>([])

  func append(_ element: Element) { elements.withLock { $0.append(element) } }
  var all: [Element] { elements.withLock { $0 } }
  func removeAll() { elements.withLock { $0.removeAll() } }
}

/// A gate an effect waits at, ignoring cancellation, until the test opens it.
final class Gate: Sendable {
  private struct State {
    var isOpen = false
    var waiters: [CheckedContinuation<Void, Never>] = []
    var countWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = Locked(State())

  func wait() async {
    await withCheckedContinuation { continuation in
      let (isOpen, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
        guard !state.isOpen else { return (true, []) }
        state.waiters.append(continuation)
        let count = state.waiters.count
        let ready = state.countWaiters.filter { $0.count <= count }.map(\.continuation)
        state.countWaiters.removeAll { $0.count <= count }
        return (false, ready)
      }
      if isOpen { continuation.resume() }
      for waiter in ready { waiter.resume() }
    }
  }

  /// Returns once at least `count` tasks wait at the gate.
  func waitForWaiters(_ count: Int) async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state in
        guard state.waiters.count < count else { return true }
        state.countWaiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  func open() {
    let waiters = state.withLock { state in
      state.isOpen = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }
}

/// Hands a value (a test core, which is not `Sendable`) to another task, to
/// be released there.
final class Handover<Value>: @unchecked Sendable {
  // Safety: `value` is set at init and read by the task that made the
  // hand-over; `release()` clears it once, in another task that the maker
  // awaits without touching `value` meanwhile, so no two accesses overlap
  // and awaiting the task orders them.
  private(set) var value: Value?

  init(_ value: Value) {
    self.value = value
  }

  func release() {
    value = nil
  }
}
