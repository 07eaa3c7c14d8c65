/// The `for await` side of the counter: it renders each state its loop takes.
///
/// It also remembers what it shows, so the session can wait until the
/// screen shows the state a command produced before prompting for the next
/// one. That wait only keeps the transcript in order; an app's view would
/// not need it.
actor Screen {
  private let write: @Sendable (String) -> Void
  private var shown: Counter?
  private var isClosed = false
  private var waiters: [(state: Counter, continuation: CheckedContinuation<Void, Never>)] = []

  init(write: @escaping @Sendable (String) -> Void) {
    self.write = write
  }

  /// Renders `state`: called by the `for await` loop with each state it takes.
  func show(_ state: Counter) {
    write("for await   count \(state.count), step \(state.step)")
    shown = state
    waiters.removeAll { waiter in
      guard waiter.state == state else { return false }
      waiter.continuation.resume()
      return true
    }
  }

  /// Called when the loop has ended: nothing will be shown any more, so
  /// nobody waits for it.
  func close() {
    isClosed = true
    for waiter in waiters { waiter.continuation.resume() }
    waiters.removeAll()
  }

  /// Returns once the screen shows `state`, or once its loop has ended.
  ///
  /// The core ends a latest-value observer on the newest state, and skips a
  /// state equal to the one it took last, so a screen that is behind always
  /// comes to show the core's current state.
  func waitUntilShowing(_ state: Counter) async {
    guard shown != state, !isClosed else { return }
    await withCheckedContinuation { waiters.append((state, $0)) }
  }
}
