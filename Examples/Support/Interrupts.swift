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
/// let (interrupts, interrupted) = AsyncStream.makeStream(of: Void.self)
/// let interrupt = await Interrupt { interrupted.finish() }   // from here the first Ctrl-C is ours
/// for await _ in interrupts {}                                // until Ctrl-C
/// interrupt.stop()
/// ```
///
/// Create it before the program writes its first line: a test (or a
/// person) that sees the first screen may press Ctrl-C at once. An
/// interactive session uses ``runSession(ending:_:)``, which creates one.
public final class Interrupt: Sendable {
  // Safety: a Dispatch source may be resumed and cancelled from any thread;
  // it is resumed once, in `init`, and cancelled once, by `stop()` (the
  // atomic `stopped` decides which call does it).
  private nonisolated(unsafe) let source: any DispatchSourceSignal
  private let stopped = Atomic(false)

  /// Calls `handler`, on a Dispatch queue, at the first SIGINT; from then
  /// on a SIGINT has its default action (it ends the process).
  ///
  /// Returns once Dispatch listens for SIGINT: from then on none is lost.
  public init(_ handler: @escaping @Sendable () -> Void) async {
    // Ignored, so that the default action (ending the process) does not
    // run until Dispatch has its own handler.
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "SIGINT"))
    self.source = source
    source.setEventHandler { [weak self] in
      guard let self, self.stopListening() else { return }
      handler()
    }
    // On Linux, Dispatch installs its handler (and the signalfd it reads)
    // on its manager thread some time after `resume()`; a SIGINT before
    // that is ignored, and lost. The registration handler runs once it is
    // installed.
    await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
      source.setRegistrationHandler { registered.resume() }
      source.resume()
    }
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
