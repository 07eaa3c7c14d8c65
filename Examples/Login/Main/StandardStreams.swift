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
/// concurrent code.)
enum StandardStreams {
  static func output(_ text: String) {
    writeAll(text, to: STDOUT_FILENO)
  }

  static func error(_ text: String) {
    writeAll(text, to: STDERR_FILENO)
  }
}

private func writeAll(_ text: String, to descriptor: Int32) {
  var text = text
  text.withUTF8 { bytes in
    guard var next = bytes.baseAddress else { return }
    var left = bytes.count
    while left > 0 {
      let written = write(descriptor, next, left)
      if written < 0 {
        if errno == EINTR { continue }
        return  // a closed pipe: nobody reads any more
      }
      next += written
      left -= written
    }
  }
}
