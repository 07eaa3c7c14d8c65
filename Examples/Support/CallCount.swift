import Synchronization

/// How many times something was called, from any thread: a session counts
/// the screens its subscribers draw, to tell whether a command drew one.
///
/// ```swift
/// let draws = CallCount()
/// let subscriber = await core.subscribe(to: \.screen) { screen in
///   draws.increment()
///   draw(screen)
/// }
/// let before = draws.value
/// try await core.dispatch(action)
/// if draws.value == before { write("  Nothing changed.\n") }
/// ```
public final class CallCount: Sendable {
  private let count = Atomic(0)

  /// A count at zero.
  public init() {}

  /// Counts one call.
  public func increment() {
    count.add(1, ordering: .releasing)
  }

  /// The calls counted so far.
  public var value: Int { count.load(ordering: .acquiring) }
}
