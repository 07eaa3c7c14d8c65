import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child process started by ``spawn(_:arguments:searchingPath:)``: its
/// id, and the test's ends of the pipes to its standard input and from its
/// standard output (and error). Whoever holds it closes them.
///
/// ```swift
/// let child = try spawn(try productPath("Counter"), arguments: ["+", "q"])
/// close(child.input)
/// ```
package struct SpawnedProcess {
  package let pid: pid_t
  /// Writes to the child's standard input.
  package let input: Int32
  /// Reads the child's standard output and standard error, together.
  package let output: Int32
}

/// Why a child process could not be started.
package struct SpawnFailure: Error, CustomStringConvertible {
  package var description: String

  package init(description: String) {
    self.description = description
  }
}

/// The path of the executable `product` (an example, a probe), built beside the running
/// test binary.
///
/// `swift test` and `swift build --build-tests` build every product of the
/// package into the same folder (`.build/debug`, `.build-tsan/debug`, the
/// release folder…), so a test runs the program built with the same
/// configuration and sanitizer.
///
/// ```swift
/// let path = try productPath("Counter")   // …/.build/debug/Counter
/// ```
///
/// - Throws: ``SpawnFailure`` with the command that builds it, when it is
///   missing: a test that needs it fails, it is never skipped.
package func productPath(_ product: String) throws(SpawnFailure) -> String {
  let path = "\(productsFolder)/\(product)"
  guard access(path, X_OK) == 0 else {
    throw SpawnFailure(
      description: "\(path) is missing: build it with the tests "
        + "(`swift build --build-tests`, which `swift test` does), with the same --scratch-path and configuration")
  }
  return path
}

/// The folder of the running test binary: where the package's products are.
private var productsFolder: String {
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

/// Starts `executable` with `arguments`, its standard input from a pipe and
/// its standard output and error into another, in its own process group so
/// that a Ctrl-C typed at the test run does not reach it. The one place
/// the tests start a process (the examples' `ExampleProgram` and
/// `TerminalProgram`, the journal's `Probe`).
///
/// ```swift
/// let child = try spawn("script", arguments: ["-q", "-e", "-c", command, "/dev/null"], searchingPath: true)
/// ```
///
/// The child gets the test run's environment, with AddressSanitizer's
/// exit-time leak check off (``childEnvironment()``), and SIGPIPE and SIGINT
/// with their default actions. SIGPIPE is ignored in the test process from
/// here on: a write to a child that has ended fails with EPIPE rather than
/// ending the test run.
///
/// - Parameters:
///   - executable: A path, or with `searchingPath` a name looked up on
///     `PATH` (`posix_spawnp`). It is the child's `argv[0]` too.
/// - Throws: ``SpawnFailure`` when a pipe or the process cannot be made.
package func spawn(
  _ executable: String, arguments: [String], searchingPath: Bool = false
) throws(SpawnFailure) -> SpawnedProcess {
  signal(SIGPIPE, SIG_IGN)
  var outputPipe: [Int32] = [-1, -1]
  var inputPipe: [Int32] = [-1, -1]
  guard makePipe(&outputPipe) else { throw SpawnFailure(description: "pipe failed: errno \(errno)") }
  guard makePipe(&inputPipe) else {
    let error = errno
    close(outputPipe[0])
    close(outputPipe[1])
    throw SpawnFailure(description: "pipe failed: errno \(error)")
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
  // SIGPIPE and SIGINT with their default actions, as a shell starts a
  // program: an ignored signal stays ignored across exec, and the test
  // process ignores SIGPIPE (below).
  var defaultSignals = sigset_t()
  sigemptyset(&defaultSignals)
  sigaddset(&defaultSignals, SIGPIPE)
  sigaddset(&defaultSignals, SIGINT)
  posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
  var flags = Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF)
  #if canImport(Darwin)
    flags |= Int16(POSIX_SPAWN_CLOEXEC_DEFAULT)  // no other descriptor leaks into the child
  #endif
  posix_spawnattr_setflags(&attributes, flags)
  posix_spawnattr_setpgroup(&attributes, 0)

  let argv = ([executable] + arguments).map { strdup($0) } + [nil]
  defer { for argument in argv { free(argument) } }
  let environment = childEnvironment()
  defer { for variable in environment { free(variable) } }
  var pid: pid_t = 0
  let result =
    searchingPath
    ? posix_spawnp(&pid, executable, &actions, &attributes, argv, environment)
    : posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
  // The child's ends: the child has its copies.
  close(inputPipe[0])
  close(outputPipe[1])
  guard result == 0 else {
    close(inputPipe[1])
    close(outputPipe[0])
    throw SpawnFailure(
      description: "\(searchingPath ? "posix_spawnp" : "posix_spawn") \(executable) failed: error \(result)")
  }
  return SpawnedProcess(pid: pid, input: inputPipe[1], output: outputPipe[0])
}

/// A pipe whose ends are closed in any child spawned later (the dup2'd
/// copies are not): parallel tests' children must not hold each other's
/// pipes open.
private func makePipe(_ ends: inout [Int32]) -> Bool {
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

/// The test run's environment for a child process, with the
/// AddressSanitizer's exit-time leak check off: these tests read the
/// program's output and status. Under `--sanitize=address` the check once
/// appended a 32-byte report to OrderService's output after Ctrl-C (not
/// reproduced since); the library's own leaks are what the in-process suite
/// checks under AddressSanitizer. The strings are `strdup`ed: free them.
private func childEnvironment() -> [UnsafeMutablePointer<CChar>?] {
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

/// Runs `body`, which blocks (`read`, `waitpid`), on a thread of its own.
///
/// Not on `DispatchQueue.global()`: that pool has about as many threads as
/// the machine has cores, so on a two-core machine two blocking readers
/// (a terminal test's, a service's) held it, and a third program's output
/// waited for one of them to end, tens of seconds under the full suite. A
/// queue of its own is served by a thread of its own.
package func onThreadOfItsOwn(_ body: @escaping @Sendable () -> Void) {
  DispatchQueue(label: "child process I/O").async(execute: body)
}
