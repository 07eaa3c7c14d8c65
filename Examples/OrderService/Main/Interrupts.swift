import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// SIGINT (Ctrl-C) as an asynchronous sequence, through a Dispatch signal
/// source: a C signal handler could do almost nothing safely.
///
/// ```swift
/// let interrupts = Interrupts()   // from here Ctrl-C no longer ends the process
/// for await _ in interrupts.signals { … }
/// interrupts.stop()
/// ```
final class Interrupts {
  /// One element per SIGINT received, until ``stop()``.
  let signals: AsyncStream<Void>
  private let source: any DispatchSourceSignal
  private let continuation: AsyncStream<Void>.Continuation

  init() {
    // Ignored, so that the default action (ending the process) does not
    // run; the source still sees the signal.
    signal(SIGINT, SIG_IGN)
    (signals, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { [continuation] in continuation.yield() }
    source.resume()
  }

  /// Stops listening, and gives SIGINT back its default action: a Ctrl-C
  /// from now on ends the process at once.
  func stop() {
    source.cancel()
    continuation.finish()
    signal(SIGINT, SIG_DFL)
  }
}
