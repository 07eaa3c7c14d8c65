/// The values one observer receives from a ``Core``, for `for await`.
///
/// A `CoreStream` is made by ``Core/states(removeDuplicates:buffering:)``,
/// ``Core/observe(_:removeDuplicates:buffering:)-(KeyPath<State,Props>Sendable,_,_)`` or
/// ``Core/actions(buffering:)``. The core
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
/// than on `AsyncStream`, so a busy observer skips straight to the newest
/// value. ``asyncStream()`` gives the same values as an `AsyncStream`.
///
/// - Important: One stream is one observer and is consumed by one loop;
///   iterating it a second time is a programmer error: the program stops
///   with a message, in every build configuration.
///   The observer is unregistered as soon as its loop ends (by `break`,
///   `return`, a thrown error or cancellation of the consuming task), or
///   when a stream that was never iterated is released.
///   The loop ends by itself when the core shuts down or is released,
///   after the observer has received the final value.
public struct CoreStream<Element: Sendable>: AsyncSequence, Sendable {
  private let hold: Hold

  @usableFromInline
  init(observer: Observer<Element>) {
    self.hold = Hold(observer: observer, endsWhenReleased: .ifNeverIterated)
  }

  /// The iterator a `for await` loop uses; a stream makes one, once.
  ///
  /// ```swift
  /// var counts = await core.observe(\.count).makeAsyncIterator()
  /// let first = await counts.next()   // the current count
  /// ```
  ///
  /// - Important: Calling it a second time on the same stream is a
  ///   programmer error: the program stops with a message.
  public func makeAsyncIterator() -> Iterator {
    hold.observer.makeIterator()
    return Iterator(hold: Hold(observer: hold.observer, endsWhenReleased: .always))
  }

  /// The same observer as an `AsyncStream`, for code that needs that type.
  ///
  /// ```swift
  /// for await count in await core.observe(\.count).asyncStream() {
  ///   if count > 9 { break }   // ends the observer
  /// }
  /// ```
  ///
  /// The observer's selector, deduplication and buffering policy still apply.
  /// The observer ends when the consuming task is cancelled, when the core
  /// shuts down, or when the `AsyncStream` is released.
  ///
  /// - Important: `AsyncStream` gives no signal when a loop ends by `break`
  ///   while the stream value is still held elsewhere (its iterators share
  ///   the stream's storage, so a later loop may resume it): such an observer
  ///   stays registered until the stream is released. Iterate the returned
  ///   stream directly, as above, or use the ``CoreStream`` itself, whose
  ///   loop ends the observer however it ends.
  public func asyncStream() -> AsyncStream<Element> {
    hold.observer.makeIterator()
    let iterating = Hold(observer: hold.observer, endsWhenReleased: .always)
    return AsyncStream(
      unfolding: { await iterating.observer.next(isolation: nil) },
      onCancel: { iterating.observer.cancel() }
    )
  }

  /// Iterates a ``CoreStream``: what `for await` uses, or a test that takes
  /// values one at a time.
  ///
  /// ```swift
  /// var states = await core.states().makeAsyncIterator()
  /// let first = await states.next()    // the current state
  /// core.send(.increment)
  /// let second = await states.next()   // the state after the increment
  /// ```
  ///
  /// Releasing the iterator ends the observer.
  public struct Iterator: AsyncIteratorProtocol {
    @usableFromInline let hold: Hold

    fileprivate init(hold: Hold) {
      self.hold = hold
    }

    /// The next value, or `nil` once the observer has ended.
    ///
    /// ```swift
    /// var counts = await core.observe(\.count).makeAsyncIterator()
    /// while let count = await counts.next() { print(count) }
    /// ```
    @inlinable
    public mutating func next() async -> Element? {
      await hold.observer.next(isolation: nil)
    }

    /// The next value, awaited without leaving the caller's actor.
    ///
    /// ```swift
    /// var counts = await core.observe(\.count).makeAsyncIterator()
    /// let count = await counts.next(isolation: #isolation)   // awaited on the caller's actor
    /// ```
    ///
    /// A `for await` loop calls this one, with the loop's isolation.
    @inlinable
    public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
      await hold.observer.next(isolation: actor)
    }
  }

  /// A hold on the observer whose release ends it: the never-iterated
  /// stream's, or the loop's iterator.
  @usableFromInline
  final class Hold: Sendable {
    enum Release {
      case ifNeverIterated
      case always
    }

    @usableFromInline let observer: Observer<Element>
    let endsWhenReleased: Release

    init(observer: Observer<Element>, endsWhenReleased: Release) {
      self.observer = observer
      self.endsWhenReleased = endsWhenReleased
    }

    deinit {
      switch endsWhenReleased {
      case .ifNeverIterated: observer.streamReleased()
      case .always: observer.cancel()
      }
    }
  }
}
