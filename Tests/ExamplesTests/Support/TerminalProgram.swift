import AsyncCoreExampleSupport
import AsyncCoreProcessTestSupport
import Dispatch
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One of the package's example executables, run in a pseudo-terminal by
/// `script` (util-linux on Linux, BSD's on macOS), typed at as a person
/// would, and read as a screen.
///
/// ```swift
/// let program = try TerminalProgram.start("Login")
/// defer { program.terminate() }
/// try await program.waitForScreen("the prompt") { $0.last == ">" }
/// program.type("555 0100\n")
/// let screen = try await program.waitForScreen("the code screen") { $0.contains("…") }
/// ```
///
/// The program sees a terminal on its standard input and output: it draws
/// with escapes, and the terminal echoes what is typed. Everything it
/// writes goes through a ``VirtualScreen``, so a test asserts on what a
/// person would see. Waits look again at each chunk the program writes
/// until the screen shows what they wait for, with no deadline of their
/// own: the test's time limit ends a wait that never comes (a loaded
/// machine is slow, not wrong), and the wait then fails with the screen. The executable is found as
/// ``ExampleProgram`` finds it (``productPath(_:)``).
final class TerminalProgram {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  let pid: pid_t
  private let input: Int32
  private let output: Output
  private var status: ExampleProgram.ExitStatus?

  private init(pid: pid_t, input: Int32, output: Output) {
    self.pid = pid
    self.input = input
    self.output = output
  }

  deinit {
    terminate()
    close(input)
  }

  /// Starts the example `product` with `arguments` under `script`, through
  /// ``spawn(_:arguments:searchingPath:)``.
  static func start(_ product: String, arguments: [String] = []) throws -> TerminalProgram {
    let path = try productPath(product)
    #if canImport(Darwin)
      let scriptArguments = ["-q", "/dev/null", path] + arguments
    #else
      // -e: script exits with the program's status; -c: run through the
      // shell, so the command is quoted.
      let command = ([path] + arguments).map(shellQuoted).joined(separator: " ")
      let scriptArguments = ["-q", "-e", "-c", command, "/dev/null"]
    #endif
    let child: SpawnedProcess
    do {
      // `script` is found on the PATH.
      child = try spawn("script", arguments: scriptArguments, searchingPath: true)
    } catch {
      throw Failure(
        description: "could not start `script` (\(error)), which runs the program in a pseudo-terminal: "
          + "it comes with util-linux (Debian's bsdutils) on Linux and with macOS")
    }
    let output = Output()
    output.startReading(child.output)
    return TerminalProgram(pid: child.pid, input: child.input, output: output)
  }

  /// Types `text` at the terminal: `"555 0100\n"` is a line and its Enter.
  func type(_ text: String) {
    writeAll(text, to: input)
  }

  /// The screen now.
  var screen: [String] { output.snapshot().screen }

  /// Everything the program wrote, escapes included, and what the terminal
  /// echoed: what was ever on the screen, even for an instant.
  var transcript: String { output.snapshot().transcript }

  /// Waits until the screen satisfies `condition`, and returns it.
  ///
  /// - Throws: ``Failure`` with `what` and the screen, once the program has
  ///   closed the terminal without showing it, or the test's time limit
  ///   cancelled the wait.
  @discardableResult
  func waitForScreen(_ what: String, until condition: ([String]) -> Bool) async throws -> [String] {
    while true {
      let (screen, _, ended, version) = output.snapshot()
      if condition(screen) { return screen }
      if ended || Task.isCancelled {
        throw Failure(
          description: "\(ended ? "the program closed the terminal" : "the test's time limit passed") "
            + "without showing \(what); the screen:\n\(screen.map { "| \($0)" }.joined(separator: "\n"))")
      }
      await output.waitForChange(after: version)
    }
  }

  /// Waits for the program (and `script`) to end: for the terminal to
  /// close, then for the process.
  ///
  /// - Throws: ``Failure`` when the test's time limit cancelled the wait first.
  func exitStatus() async throws -> ExampleProgram.ExitStatus {
    if let status { return status }
    while true {
      let (_, _, ended, version) = output.snapshot()
      if ended { break }
      if Task.isCancelled {
        throw Failure(
          description: "the program was still running at the test's time limit; the screen:\n"
            + screen.map { "| \($0)" }.joined(separator: "\n"))
      }
      await output.waitForChange(after: version)
    }
    // `script` closes the terminal as it exits: this wait is that short.
    var raw: Int32 = 0
    while waitpid(pid, &raw, 0) < 0 {
      guard errno == EINTR else { throw Failure(description: "waitpid failed: errno \(errno)") }
    }
    // The <sys/wait.h> macros, which Swift does not import.
    let signal = raw & 0x7F
    let ended: ExampleProgram.ExitStatus = signal == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(signal)
    status = ended
    return ended
  }

  /// Kills `script` if it is still running: the clean-up of a failed test.
  /// The program loses its terminal with it (it gets SIGHUP).
  func terminate() {
    guard status == nil else { return }
    kill(pid, SIGKILL)
    var raw: Int32 = 0
    while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
    status = .signaled(SIGKILL)
  }

  private static func shellQuoted(_ word: String) -> String {
    "'" + word.replacing("'", with: "'\\''") + "'"
  }
}

/// What the terminal shows, fed by a reading thread and read by the test,
/// which waits for each change (keyed by id) rather than polling.
// Safety: every stored property is read and written only on `queue`, a
// serial queue (which ThreadSanitizer sees), from `startReading(_:)`'s
// thread, from `snapshot()` and from `waitForChange(after:)`.
private final class Output: @unchecked Sendable {
  private let queue = DispatchQueue(label: "terminal output")
  private var virtualScreen = VirtualScreen()
  private var bytes: [UInt8] = []
  private var ended = false
  /// Counts the chunks read and the end.
  private var version = 0
  private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
  private var nextWaiter = 0

  /// Reads `descriptor` on a thread of its own (`read` blocks) until end
  /// of file, then closes it.
  func startReading(_ descriptor: Int32) {
    onThreadOfItsOwn {
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        let chunk = buffer[..<count]
        self.changed {
          self.bytes += chunk
          self.virtualScreen.feed(chunk)
        }
      }
      close(descriptor)
      self.changed { self.ended = true }
    }
  }

  func snapshot() -> (screen: [String], transcript: String, ended: Bool, version: Int) {
    queue.sync { (virtualScreen.lines, String(decoding: bytes, as: UTF8.self), ended, version) }
  }

  /// Returns once the output is past `version` (a chunk, or the end), or
  /// the waiting task is cancelled.
  func waitForChange(after version: Int) async {
    let id = queue.sync {
      defer { nextWaiter += 1 }
      return nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let now = queue.sync {
          guard self.version == version, !Task.isCancelled else { return true }
          waiters[id] = continuation
          return false
        }
        if now { continuation.resume() }
      }
    } onCancel: {
      queue.sync { waiters.removeValue(forKey: id) }?.resume()
    }
  }

  /// Applies `change` and resumes every waiter, outside the queue.
  private func changed(_ change: () -> Void) {
    let resumed = queue.sync {
      change()
      version += 1
      defer { waiters = [:] }
      return Array(waiters.values)
    }
    for waiter in resumed { waiter.resume() }
  }
}
