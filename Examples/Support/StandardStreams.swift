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
/// StandardStreams.output("count 1\n")
/// ```
public enum StandardStreams {
  /// Writes `text` to standard output.
  public static func output(_ text: String) {
    writeAll(text, to: STDOUT_FILENO)
  }

  /// Writes `text` to standard error.
  public static func error(_ text: String) {
    writeAll(text, to: STDERR_FILENO)
  }
}

/// Writes all of `text` to `descriptor`, retrying after a signal; stops
/// when the reader is gone (a closed pipe).
///
/// ```swift
/// writeAll("q\n", to: pipe.input)
/// ```
public func writeAll(_ text: String, to descriptor: Int32) {
  var text = text
  text.withUTF8 { bytes in
    guard var next = bytes.baseAddress else { return }
    var left = bytes.count
    while left > 0 {
      let written = write(descriptor, next, left)
      if written < 0 && errno == EINTR { continue }
      if written <= 0 { return }  // a closed pipe: nobody reads any more
      next += written
      left -= written
    }
  }
}
