import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The first SIGINT (Ctrl-C), handled through a Dispatch signal source: a C
/// signal handler could do almost nothing safely. The examples stop
/// gracefully on it; a second Ctrl-C ends the process at once.
///
/// ```swift
/// let interrupt = Interrupt { lines.end() }   // from here the first Ctrl-C ends the input
/// _ = await session.run(lines: lines)          // then says bye, as at `q`
/// interrupt.stop()
/// ```
///
/// Create it before the program writes its first line: a test (or a
/// person) that sees the first screen may press Ctrl-C at once.
public final class Interrupt: Sendable {
  // Safety: a Dispatch source may be resumed and cancelled from any thread;
  // it is resumed once, in `init`, and cancelled once, by `stop()` (the
  // atomic `stopped` decides which call does it).
  private nonisolated(unsafe) let source: any DispatchSourceSignal
  private let stopped = Atomic(false)

  /// Calls `handler`, on a Dispatch queue, at the first SIGINT; from then
  /// on a SIGINT has its default action (it ends the process).
  public init(_ handler: @escaping @Sendable () -> Void) {
    // Ignored, so that the default action (ending the process) does not
    // run; the source still sees the signal.
    signal(SIGINT, SIG_IGN)
    source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "SIGINT"))
    source.setEventHandler { [weak self] in
      guard let self, self.stopListening() else { return }
      handler()
    }
    source.resume()
  }

  deinit {
    _ = stopListening()
  }

  /// Stops listening, and gives SIGINT back its default action: a Ctrl-C
  /// from now on ends the process at once. Calling it again does nothing.
  public func stop() {
    _ = stopListening()
  }

  /// Whether this call stopped the source (no other had).
  private func stopListening() -> Bool {
    guard stopped.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
      return false
    }
    source.cancel()
    signal(SIGINT, SIG_DFL)
    return true
  }
}
