import Synchronization

/// Counts the `LiveToken`s made with it that are still alive: how a test
/// sees when a queue releases what it held.
final class LiveTokens: Sendable {
  private let alive = Atomic<Int>(0)

  /// How many tokens made with this counter are alive.
  var count: Int { alive.load(ordering: .acquiring) }

  /// `count` new tokens.
  func make(_ count: Int) -> [LiveToken] {
    (0..<count).map { _ in LiveToken(counter: self) }
  }

  fileprivate func add(_ delta: Int) {
    alive.add(delta, ordering: .acquiringAndReleasing)
  }
}

/// A payload that counts itself alive in its `LiveTokens` from init to deinit.
final class LiveToken: Sendable {
  private let counter: LiveTokens

  fileprivate init(counter: LiveTokens) {
    self.counter = counter
    counter.add(1)
  }

  deinit { counter.add(-1) }
}
