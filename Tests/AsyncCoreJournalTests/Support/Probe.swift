import AsyncCoreProcessTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The AsyncCoreJournalProbe executable (or another of the package's, such
/// as `asynccore-inspect`), run as a child process, read a line at a time
/// with blocking reads (on a thread of its own, through ``blocking(_:)``).
final class Probe {
  let pid: pid_t
  private let input: Int32
  private var inputClosed = false
  private let output: Int32
  private var buffer: [UInt8] = []
  private var ended = false
  private var waited: Int32?

  init(_ arguments: [String], product: String = "AsyncCoreJournalProbe") throws {
    let child = try spawn(try productPath(product), arguments: arguments)
    pid = child.pid
    input = child.input
    output = child.output
  }

  deinit {
    closeInput()
    close(output)
    if waited == nil {
      kill(pid, SIGKILL)
      _ = exitStatus()
    }
  }

  /// The next line of its output, or `nil` at its end.
  func nextLine() -> String? {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      if ended {
        guard !buffer.isEmpty else { return nil }
        defer { buffer.removeAll() }
        return String(decoding: buffer, as: UTF8.self)
      }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = read(output, &chunk, chunk.count)
      if count < 0, errno == EINTR { continue }
      if count <= 0 {
        ended = true
      } else {
        buffer += chunk[..<count]
      }
    }
  }

  /// Every line until its output ends.
  func remainingLines() -> [String] {
    var lines: [String] = []
    while let line = nextLine() { lines.append(line) }
    return lines
  }

  /// Writes `bytes` to its standard input (blocking while its pipe is full).
  func send(_ bytes: [UInt8]) {
    var done = 0
    while done < bytes.count {
      let result = bytes[done...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
      if result < 0, errno == EINTR { continue }
      if result <= 0 { return }
      done += result
    }
  }

  /// Ends its standard input.
  ///
  /// Once: closing the descriptor again would close whatever file another
  /// test's pipe has been given that number since.
  func closeInput() {
    guard !inputClosed else { return }
    inputClosed = true
    close(input)
  }

  /// Kills it with SIGKILL.
  func kill9() {
    kill(pid, SIGKILL)
  }

  /// Waits for it to end: the exit code, or 128 + the signal.
  @discardableResult
  func exitStatus() -> Int32 {
    if let waited { return waited }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    waited = code
    return code
  }
}

/// Runs `body`, which blocks (`read`, `waitpid`), on a thread of its own,
/// and returns its result: the test's task is suspended, not a thread of
/// the concurrency pool blocked.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    onThreadOfItsOwn { continuation.resume(with: Result { try body() }) }
  }
}
