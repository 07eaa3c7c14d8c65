import Dispatch
import Synchronization

/// The lines a session reads: some given (the command line's), then, if
/// asked, standard input's. They end at the end of standard input, or at
/// ``end()`` (Ctrl-C), whichever comes first.
///
/// ```swift
/// let lines = InputLines(options.lines, thenStandardInput: options.readsStandardInput)
/// // Ctrl-C ends the lines, and the session as `q` does.
/// await Interrupt.runSession(ending: lines) { _ = await session.run(lines: lines) }
/// ```
///
/// Standard input is read on a Dispatch thread of its own: `readLine`
/// blocks, and must not hold one of the few threads tasks run on. It reads
/// ahead of the session (piped lines wait while a request runs) by at most
/// ``readAhead`` lines, then waits for the session to take one. At the end
/// of standard input the lines read before it are still given; after
/// ``end()`` none is, even one read already, so a session ends after the
/// line it is handling.
public final class InputLines: AsyncSequence, Sendable {
  public typealias Element = String
  public typealias Failure = Never

  private let lines: AsyncStream<String>
  private let continuation: AsyncStream<String>.Continuation
  private let hasEnded = Atomic(false)
  private let isCut = Atomic(false)
  private let onEnd: @Sendable () -> Void
  /// Room for lines of standard input read and not taken yet.
  private let room = DispatchSemaphore(value: InputLines.readAhead)
  /// How many of `room`'s places lines hold now (waited for, not yet
  /// signalled back): given back in `deinit`, since libdispatch stops the
  /// program when a semaphore goes away below the value it was made with
  /// (lines read after `q`, never taken, would hold some).
  private let roomTaken = Atomic(0)
  /// The given lines not taken yet: they come first, and take no room.
  private let givenLeft: Atomic<Int>

  /// The most lines of standard input read before the session takes them.
  public static let readAhead = 256

  /// `given`, then, if `thenStandardInput`, the lines of standard input.
  ///
  /// - Parameter onEnd: Called once, when standard input ends or ``end()``
  ///   is called: an interactive program ends its prompt's line there.
  public convenience init(
    _ given: [String] = [], thenStandardInput: Bool = true, onEnd: @escaping @Sendable () -> Void = {}
  ) {
    let readStandardInput: @Sendable () -> String? = { readLine() }
    self.init(given, readingWith: thenStandardInput ? readStandardInput : nil, onEnd: onEnd)
  }

  /// `given`, then the lines `read` returns until it returns `nil`, read on
  /// a thread of their own (standard input's `readLine`; a test's source).
  package init(
    _ given: [String], readingWith read: (@Sendable () -> String?)?, onEnd: @escaping @Sendable () -> Void
  ) {
    (lines, continuation) = AsyncStream.makeStream()
    self.onEnd = onEnd
    givenLeft = Atomic(given.count)
    for line in given { continuation.yield(line) }
    guard let read else {
      continuation.finish()  // the given lines are still read
      return
    }
    DispatchQueue(label: "standard input").async { [self] in
      while !isCut.load(ordering: .acquiring), let line = read() {
        room.wait()
        roomTaken.add(1, ordering: .relaxed)
        continuation.yield(line)
      }
      finish()
    }
  }

  /// Ends the lines now: the session reads none after the one it is
  /// handling. Calling it again does nothing.
  public func end() {
    isCut.store(true, ordering: .releasing)
    finish()
  }

  private func finish() {
    guard hasEnded.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
      return
    }
    onEnd()
    continuation.finish()
  }

  /// Makes room for a line of standard input, once the given lines are taken.
  private func tookOne() {
    if givenLeft.load(ordering: .relaxed) > 0 {
      givenLeft.subtract(1, ordering: .relaxed)
    } else {
      roomTaken.subtract(1, ordering: .relaxed)
      room.signal()
    }
  }

  deinit {
    // The reading thread has let go of `self`, so nothing waits on `room`.
    for _ in 0..<roomTaken.load(ordering: .relaxed) { room.signal() }
  }

  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(lines: lines.makeAsyncIterator(), owner: self)
  }

  /// Gives the lines in order until they end.
  public struct AsyncIterator: AsyncIteratorProtocol {
    public typealias Element = String
    public typealias Failure = Never

    var lines: AsyncStream<String>.Iterator
    let owner: InputLines

    public mutating func next() async -> String? {
      guard !owner.isCut.load(ordering: .acquiring), let line = await lines.next() else { return nil }
      owner.tookOne()
      // Read before `end()`, taken after: not given.
      return owner.isCut.load(ordering: .acquiring) ? nil : line
    }
  }
}
