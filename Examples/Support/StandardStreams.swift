#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Standard output and error, written with `write(2)`: unbuffered, so a
/// pipe's reader (a test, `tee`) sees each line as it is written, and one
/// call per piece of text, so lines from different tasks never interleave.
/// (C's `stdout` is a global variable, which Swift 6 rejects from
/// concurrent code.) Shared by the examples' executables and their tests.
///
/// ```swift
/// StandardStreams.endQuietlyWhenTheReaderLeaves()   // first, in main
/// StandardStreams.output("count 1\n")
/// ```
///
/// When the reader of either stream has gone (`Counter … | head -1` once
/// `head` has its line), the program ends there, quietly, with status 0:
/// nothing it would write can be read any more.
public enum StandardStreams {
  /// Makes a reader that leaves end the program quietly with status 0
  /// rather than by SIGPIPE (status 141 in a shell): SIGPIPE is ignored, so
  /// a write to a pipe nobody reads fails with EPIPE, which ``output(_:)``
  /// and ``error(_:)`` take as the end. Call it before the first write.
  ///
  /// ```swift
  /// static func main() async {
  ///   StandardStreams.endQuietlyWhenTheReaderLeaves()
  ///   …
  /// }
  /// ```
  public static func endQuietlyWhenTheReaderLeaves() {
    signal(SIGPIPE, SIG_IGN)
  }

  /// Writes `text` to standard output; ends the program with status 0 if
  /// its reader has gone.
  public static func output(_ text: String) {
    write(text, to: STDOUT_FILENO)
  }

  /// Writes `text` to standard error; ends the program with status 0 if
  /// its reader has gone.
  public static func error(_ text: String) {
    write(text, to: STDERR_FILENO)
  }

  private static func write(_ text: String, to descriptor: Int32) {
    guard case .failed(let error) = writeAll(text, to: descriptor), error == EPIPE else { return }
    // The reader left. `_exit`, not `exit`: this runs on whichever thread
    // wrote (inside a core, a Dispatch queue), and `exit` is not safe to
    // call from two threads at once, nor while others run; nothing is
    // buffered to flush (every write goes straight to the descriptor).
    _exit(0)
  }
}

/// How ``writeAll(_:to:)`` ended.
///
/// ```swift
/// if case .failed(EPIPE) = writeAll("q\n", to: pipe.input) { print("the program has ended") }
/// ```
public enum WriteResult: Sendable, Equatable {
  /// Every byte was written.
  case written
  /// `write` failed with this `errno`: `EPIPE` when nobody reads the pipe
  /// any more (with SIGPIPE ignored; otherwise the signal ends the process).
  case failed(Int32)
}

/// Writes all of `text` to `descriptor`, retrying after a signal; stops at
/// the first error, which it returns.
///
/// ```swift
/// writeAll("q\n", to: pipe.input)
/// ```
@discardableResult
public func writeAll(_ text: String, to descriptor: Int32) -> WriteResult {
  var text = text
  return text.withUTF8 { bytes in
    guard var next = bytes.baseAddress else { return .written }
    var left = bytes.count
    while left > 0 {
      let written = write(descriptor, next, left)
      if written < 0 && errno == EINTR { continue }
      if written < 0 { return .failed(errno) }
      if written == 0 { return .failed(EIO) }  // not for pipes and terminals; never loop on it
      next += written
      left -= written
    }
    return .written
  }
}
