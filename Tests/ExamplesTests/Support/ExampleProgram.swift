import AsyncCoreExampleSupport
import Dispatch
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
/// The executable is the one built beside the running test binary:
/// `swift test` and `swift build --build-tests` build every product of the
/// package into the same folder (`.build/debug`, `.build-tsan/debug`, the
/// release folder…), so the test runs the program built with the same
/// configuration and sanitizer. A missing one fails the test with the
/// command that builds it; it is never skipped.
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

  struct LaunchFailure: Error, CustomStringConvertible {
    var description: String
  }

  let pid: pid_t
  /// What the program writes to standard output and standard error, a line
  /// at a time (without the newline), ending when it closes them.
  let output: AsyncStream<String>
  private var status: ExitStatus?

  private init(pid: pid_t, output: AsyncStream<String>) {
    self.pid = pid
    self.output = output
  }

  /// The folder of the running test binary: where the package's products are.
  static var productsFolder: String {
    #if canImport(Darwin)
      // …/debug/AsyncCorePackageTests.xctest/Contents/MacOS/AsyncCorePackageTests,
      // loaded by xctest or swiftpm-testing-helper.
      var info = Dl_info()
      guard dladdr(#dsohandle, &info) != 0, let file = info.dli_fname else { return "." }
      let binary = String(cString: file)
    #else
      // …/debug/AsyncCorePackageTests.xctest, the executable itself.
      var bytes = [CChar](repeating: 0, count: 4096)
      let count = readlink("/proc/self/exe", &bytes, bytes.count - 1)
      guard count > 0 else { return "." }
      let binary = String(decoding: bytes[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    #endif
    var components = binary.split(separator: "/", omittingEmptySubsequences: false)
    if let bundle = components.lastIndex(where: { $0.hasSuffix(".xctest") }) {
      components.removeSubrange(bundle...)
    } else {
      components.removeLast()
    }
    return components.joined(separator: "/")
  }

  /// Starts the example `product` with `arguments`, its standard input
  /// `input` (or empty), in its own process group so that a Ctrl-C typed at
  /// the test run does not reach it.
  static func start(_ product: String, arguments: [String] = [], input: String? = nil) throws -> ExampleProgram {
    let path = "\(productsFolder)/\(product)"
    guard access(path, X_OK) == 0 else {
      throw LaunchFailure(
        description: "\(path) is missing: build the examples with the tests "
          + "(`swift build --build-tests`, which `swift test` does), with the same --scratch-path and configuration")
    }
    var outputPipe: [Int32] = [-1, -1]
    var inputPipe: [Int32] = [-1, -1]
    guard makePipe(&outputPipe), makePipe(&inputPipe) else {
      throw LaunchFailure(description: "pipe failed: errno \(errno)")
    }

    #if canImport(Darwin)
      var actions: posix_spawn_file_actions_t = nil
      var attributes: posix_spawnattr_t = nil
    #else
      var actions = posix_spawn_file_actions_t()
      var attributes = posix_spawnattr_t()
    #endif
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    defer {
      posix_spawn_file_actions_destroy(&actions)
      posix_spawnattr_destroy(&attributes)
    }
    posix_spawn_file_actions_adddup2(&actions, inputPipe[0], STDIN_FILENO)
    posix_spawn_file_actions_adddup2(&actions, outputPipe[1], STDOUT_FILENO)
    posix_spawn_file_actions_adddup2(&actions, outputPipe[1], STDERR_FILENO)
    var flags = Int16(POSIX_SPAWN_SETPGROUP)
    #if canImport(Darwin)
      flags |= Int16(POSIX_SPAWN_CLOEXEC_DEFAULT)  // no other descriptor leaks into the child
    #endif
    posix_spawnattr_setflags(&attributes, flags)
    posix_spawnattr_setpgroup(&attributes, 0)

    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid: pid_t = 0
    let environment = childEnvironment()
    defer { for variable in environment { free(variable) } }
    let result = posix_spawn(&pid, path, &actions, &attributes, argv, environment)
    close(inputPipe[0])
    close(outputPipe[1])
    guard result == 0 else {
      close(inputPipe[1])
      close(outputPipe[0])
      throw LaunchFailure(description: "posix_spawn \(path) failed: error \(result)")
    }
    writeAll(input ?? "", to: inputPipe[1])
    close(inputPipe[1])
    return ExampleProgram(pid: pid, output: lines(from: outputPipe[0]))
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

  /// The lines read from `descriptor` on a thread of its own (`read`
  /// blocks), until end of file; then the descriptor is closed.
  private static func lines(from descriptor: Int32) -> AsyncStream<String> {
    AsyncStream { continuation in
      onThreadOfItsOwn {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
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

  /// A pipe whose ends are closed in any child spawned later (the dup2'd
  /// copies are not): parallel tests' children must not hold each other's
  /// pipes open.
  static func makePipe(_ ends: inout [Int32]) -> Bool {
    #if canImport(Darwin)
      // posix_spawn closes the rest with POSIX_SPAWN_CLOEXEC_DEFAULT.
      return pipe(&ends) == 0
    #else
      // pipe2 sets close-on-exec atomically, so a child another test spawns
      // meanwhile cannot inherit the pipe; Glibc's module leaves it out
      // (a GNU extension), so it is looked up.
      typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
      guard let program = dlopen(nil, RTLD_NOW) else { return false }
      defer { dlclose(program) }
      guard let symbol = dlsym(program, "pipe2") else { return false }
      return unsafeBitCast(symbol, to: Pipe2.self)(&ends, O_CLOEXEC) == 0
    #endif
  }
}

/// Runs `body`, which blocks (`read`, `waitpid`), on a thread of its own.
///
/// Not on `DispatchQueue.global()`: that pool has about as many threads as
/// the machine has cores, so on a two-core machine two blocking readers
/// (a terminal test's, a service's) held it, and a third program's output
/// waited for one of them to end, tens of seconds under the full suite. A
/// queue of its own is served by a thread of its own.
func onThreadOfItsOwn(_ body: @escaping @Sendable () -> Void) {
  DispatchQueue(label: "example program I/O").async(execute: body)
}

/// The test run's environment for an example's process, with the
/// AddressSanitizer's exit-time leak check off: these tests read the
/// program's output and status. Under `--sanitize=address` the check once
/// appended a 32-byte report to OrderService's output after Ctrl-C (not
/// reproduced since); the library's own leaks are what the in-process suite
/// checks under AddressSanitizer. The strings are `strdup`ed: free them.
func childEnvironment() -> [UnsafeMutablePointer<CChar>?] {
  var variables: [String] = []
  var sanitizerOptions = "detect_leaks=0"
  var next = environ
  while let variable = next.pointee {
    let text = String(cString: variable)
    if text.hasPrefix("ASAN_OPTIONS=") {
      sanitizerOptions = text.dropFirst("ASAN_OPTIONS=".count) + ":detect_leaks=0"
    } else {
      variables.append(text)
    }
    next += 1
  }
  variables.append("ASAN_OPTIONS=\(sanitizerOptions)")
  return variables.map { strdup($0) } + [nil]
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
