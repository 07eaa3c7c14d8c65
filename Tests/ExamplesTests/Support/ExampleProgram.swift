import AsyncCoreExampleSupport
import AsyncCoreProcessTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One of the package's example executables, run as a child process.
///
/// ```swift
/// let program = try ExampleProgram.start("Counter", arguments: ["+", "q"])
/// let lines = await program.allLines()
/// #expect(await program.exitStatus() == .exited(0))
/// ```
///
/// The executable is the one built beside the running test binary
/// (``productPath(_:)``); a missing one fails the test with the command
/// that builds it; it is never skipped.
final class ExampleProgram {
  /// How the process ended.
  enum ExitStatus: Equatable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    var description: String {
      switch self {
      case .exited(let code): "exited with \(code)"
      case .signaled(let signal): "killed by signal \(signal)"
      }
    }
  }

  let pid: pid_t
  /// What the program writes to standard output and standard error, a line
  /// at a time (without the newline), ending when it closes them or
  /// ``stopReading()`` has closed the pipe.
  let output: AsyncStream<String>
  /// The pipe to the program's standard input, while it is open.
  private var input: Int32?
  private let reader: OutputReader
  private var status: ExitStatus?

  private init(pid: pid_t, input: Int32?, output: AsyncStream<String>, reader: OutputReader) {
    self.pid = pid
    self.input = input
    self.output = output
    self.reader = reader
  }

  deinit {
    closeInput()
  }

  /// Starts the example `product` with `arguments` and its standard input
  /// `input` (or empty) through ``spawn(_:arguments:searchingPath:)``.
  ///
  /// - Parameter keepingInputOpen: Whether standard input stays open after
  ///   `input`, for ``type(_:)``; otherwise the program reads its end at
  ///   once.
  static func start(
    _ product: String, arguments: [String] = [], input: String? = nil, keepingInputOpen: Bool = false
  ) throws -> ExampleProgram {
    let child = try spawn(try productPath(product), arguments: arguments)
    writeAll(input ?? "", to: child.input)
    if !keepingInputOpen { close(child.input) }
    let reader = OutputReader()
    return ExampleProgram(
      pid: child.pid, input: keepingInputOpen ? child.input : nil, output: reader.lines(from: child.output),
      reader: reader)
  }

  /// Writes `text` to the program's standard input (kept open by `start`):
  /// `"+\n"` is a line.
  func type(_ text: String) {
    if let input { writeAll(text, to: input) }
  }

  /// Closes the program's standard input: it reads its end.
  func closeInput() {
    if let input { close(input) }
    input = nil
  }

  /// Closes the read end of the output pipe once the program next writes,
  /// as `head -1` does once it has its line: from then on the program's
  /// writes fail (SIGPIPE, or EPIPE where it is ignored), and ``output``
  /// ends.
  ///
  /// The reading thread closes it, after its `read` returns: closing a
  /// descriptor another thread reads would not end that `read`, and its
  /// number could be reused meanwhile.
  func stopReading() {
    reader.stop()
  }

  /// Sends SIGINT, as Ctrl-C in a terminal would.
  func interrupt() {
    if status == nil { kill(pid, SIGINT) }
  }

  /// Kills the program if it is still running: the clean-up of a failed test.
  func terminate() {
    if status == nil { kill(pid, SIGKILL) }
  }

  /// Every line of output until the program closes it.
  func allLines() async -> [String] {
    var lines: [String] = []
    for await line in output { lines.append(line) }
    return lines
  }

  /// Waits for the program to end (read its output to the end first).
  func exitStatus() async -> ExitStatus {
    if let status { return status }
    let pid = pid
    let ended: ExitStatus = await withCheckedContinuation { continuation in
      // `waitpid` blocks: on a thread of its own.
      onThreadOfItsOwn {
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        // The <sys/wait.h> macros, which Swift does not import.
        let signal = raw & 0x7F
        continuation.resume(returning: signal == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(signal))
      }
    }
    status = ended
    return ended
  }
}

/// Reads a program's output as lines, on a thread of its own (`read`
/// blocks), until end of file or ``stop()``; then closes the descriptor.
private final class OutputReader: Sendable {
  private let isStopped = Atomic(false)

  func stop() {
    isStopped.store(true, ordering: .releasing)
  }

  func lines(from descriptor: Int32) -> AsyncStream<String> {
    AsyncStream { continuation in
      onThreadOfItsOwn { [self] in
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !isStopped.load(ordering: .acquiring) {
          let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
          if count < 0 && errno == EINTR { continue }
          if count <= 0 { break }
          pending += buffer[..<count]
          while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
          }
        }
        if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
        close(descriptor)
        continuation.finish()
      }
    }
  }
}

extension Trait where Self == TimeLimitTrait {
  /// A hang detector, not a speed target: generous because CI runs these
  /// under ThreadSanitizer beside the stress tests.
  static var hangDetector: Self { .timeLimit(.minutes(5)) }
}

/// Collects what a closure-based writer writes, from any thread, through an
/// `AsyncStream` (whose lock ThreadSanitizer sees, unlike the futex path of
/// `Synchronization.Mutex` on Linux).
struct Collector: Sendable {
  private let stream: AsyncStream<String>
  private let continuation: AsyncStream<String>.Continuation

  init() {
    (stream, continuation) = AsyncStream.makeStream()
  }

  /// Writes one piece of text.
  var write: @Sendable (String) -> Void {
    { [continuation] in continuation.yield($0) }
  }

  /// Everything written so far; call once, when the writers are done.
  func finish() async -> [String] {
    continuation.finish()
    var pieces: [String] = []
    for await piece in stream { pieces.append(piece) }
    return pieces
  }
}
