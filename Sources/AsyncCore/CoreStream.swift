/// The values one observer receives from a ``Core``, for `for await`.
///
/// A `CoreStream` is made by ``Core/states(buffering:)``,
/// ``Core/observe(_:buffering:)`` or ``Core/actions(buffering:)``. The core
/// evaluates the selector and removes duplicates before waking the consumer,
/// so the loop runs only when its values change.
///
/// ```swift
/// for await count in await core.observe(\.count) {
///   print("count is", count)   // the current count first, then each change
/// }
/// ```
///
/// It is built on a latest-value cell with one parked continuation rather
/// than on `AsyncStream`: on the benchmark machine that wakes observers in
/// about half the time and lets a busy observer skip straight to the newest
/// value. ``asyncStream()`` gives the same values as an `AsyncStream`.
///
/// - Important: One stream is one observer and is consumed by one loop;
///   iterating it a second time is a programmer error (a precondition).
///   The observer is unregistered as soon as its loop ends (by `break`,
///   `return`, a thrown error or cancellation of the consuming task), or
///   when a stream that was never iterated is released.
///   The loop ends by itself when the core shuts down or is released,
///   after the observer has received the final value.
public struct CoreStream<Element: Sendable>: AsyncSequence, Sendable {
  public typealias Failure = Never

  private let registration: Registration

  @usableFromInline
  init(cell: ObserverCell<Element>) {
    self.registration = Registration(cell: cell)
  }

  public func makeAsyncIterator() -> Iterator {
    registration.cell.makeIterator()
    return Iterator(consumer: Consumer(cell: registration.cell))
  }

  /// The same observer as an `AsyncStream`, for code that needs that type.
  ///
  /// ```swift
  /// let counts: AsyncStream<Int> = await core.observe(\.count).asyncStream()
  /// ```
  ///
  /// The observer's selector, deduplication and buffering policy still apply;
  /// ending or dropping the `AsyncStream` unregisters the observer.
  public func asyncStream() -> AsyncStream<Element> {
    registration.cell.makeIterator()
    let consumer = Consumer(cell: registration.cell)
    return AsyncStream(unfolding: { await consumer.cell.next(isolation: nil) })
  }

  /// Iterates a ``CoreStream``.
  public struct Iterator: AsyncIteratorProtocol {
    @usableFromInline let consumer: Consumer

    fileprivate init(consumer: Consumer) {
      self.consumer = consumer
    }

    /// The next value, or `nil` once the observer has ended.
    @inlinable
    public mutating func next() async -> Element? {
      await consumer.cell.next(isolation: nil)
    }

    /// The next value, awaited without leaving the caller's actor.
    @inlinable
    public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
      await consumer.cell.next(isolation: actor)
    }
  }

  /// The stream value's hold on its observer: releasing a stream that was
  /// never iterated unregisters the observer.
  fileprivate final class Registration: Sendable {
    let cell: ObserverCell<Element>
    init(cell: ObserverCell<Element>) { self.cell = cell }
    deinit { cell.streamReleased() }
  }

  /// The iterator's hold on its observer: when the loop ends, for whatever
  /// reason, the iterator is released and the observer unregistered.
  @usableFromInline
  final class Consumer: Sendable {
    @usableFromInline let cell: ObserverCell<Element>
    init(cell: ObserverCell<Element>) { self.cell = cell }
    deinit { cell.cancel() }
  }
}
