import AsyncCore
import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The "inspect" family's child process (see InspectBenchmarks.swift): the
// benchmark's own executable, started with a hidden first argument, runs
// one inspector command with `--stats` and reports how long it took and
// the most memory it had resident. A process of its own, so that its
// peak memory is the inspector's, not the benchmark's.

/// The hidden first argument that makes the benchmark a child running one
/// inspector command: `--inspect-child typed|untyped COMMAND PATH …`.
let inspectChildArgument = "--inspect-child"

/// Runs the child's command and exits with its status. It writes
/// `inspect-child: elapsed NS status S` on standard error after the
/// command's own lines (the last of which, from `--stats`, is its peak
/// resident memory).
///
/// `typed` runs `Inspector.run` with the journal family's state, action
/// and reducer (what `state` needs); `untyped` runs what `asynccore-inspect`
/// runs, on the stored JSON.
func inspectChildMain(_ arguments: [String]) -> Never {
  guard let mode = arguments.first, mode == "typed" || mode == "untyped" else {
    printError("\(inspectChildArgument) takes typed or untyped, then an inspector command")
    exit(2)
  }
  let command = Array(arguments.dropFirst()) + ["--stats"]
  let clock = ContinuousClock()
  let start = clock.now
  let status =
    mode == "typed"
    ? Inspector.run(command, initialState: JournalBenchState(), reducer: Reduce(journalBenchReduce))
    : InspectorCommand(program: "asynccore-inspect").runWithoutTypes(command)
  let elapsed = clock.now - start
  let (seconds, attoseconds) = elapsed.components
  printError("inspect-child: elapsed \(seconds * 1_000_000_000 + attoseconds / 1_000_000_000) status \(status)")
  exit(status)
}

/// `text` and a newline on standard error, after what standard output holds.
private func printError(_ text: String) {
  fflush(nil)
  let bytes = Array((text + "\n").utf8)
  var done = 0
  while done < bytes.count {
    let written = bytes[done...].withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    if written < 0 && errno == EINTR { continue }
    if written <= 0 { return }
    done += written
  }
}

/// What one child run reported.
struct InspectChildRun {
  /// The command's time, measured in the child (without its start-up).
  var elapsed: Duration
  /// Its exit status.
  var status: Int32
  /// Its `VmHWM`, in bytes; `nil` where /proc/self/status is missing.
  var peakBytes: Int?
  /// What it wrote on standard error, and on standard output unless that
  /// went to /dev/null.
  var output: String
}

/// Starts the benchmark's own executable as a child running `command`
/// (`typed` or not), waits for it and returns what it reported; ends the
/// run when it cannot be started or reports nothing. With
/// `discardingOutput`, the command's standard output goes to /dev/null
/// (`list` writes a line per record).
func runInspectChild(typed: Bool, _ command: [String], discardingOutput: Bool) -> InspectChildRun {
  let output = runOwnExecutable(
    [inspectChildArgument, typed ? "typed" : "untyped"] + command, discardingOutput: discardingOutput)
  let lines = output.split(separator: "\n")
  guard let report = lines.last(where: { $0.hasPrefix("inspect-child: elapsed ") }),
    let nanoseconds = report.split(separator: " ").dropFirst(2).first.flatMap({ Int64($0) }),
    let status = report.split(separator: " ").last.flatMap({ Int32($0) })
  else {
    fatalError(
      "AsyncCoreBenchmarks: the inspect child (\(command.joined(separator: " "))) reported nothing:\n\(output)")
  }
  // `--stats`: "PROGRAM: peak resident memory 12345 kB".
  let peak = lines.last { $0.contains(": peak resident memory ") }.flatMap { line -> Int? in
    let words = line.split(separator: " ")
    guard words.count >= 2, words.last == "kB", let kilobytes = Int(words[words.count - 2]) else { return nil }
    return kilobytes * 1_024
  }
  return InspectChildRun(elapsed: .nanoseconds(nanoseconds), status: status, peakBytes: peak, output: output)
}

/// Starts the benchmark's own executable with `arguments`, waits for it
/// and returns what it wrote on standard error (and on standard output,
/// unless `discardingOutput` sends that to /dev/null); ends the run when it
/// cannot be started.
func runOwnExecutable(_ arguments: [String], discardingOutput: Bool = false) -> String {
  let executable = ownExecutable()
  var ends: [Int32] = [-1, -1]
  guard pipe(&ends) == 0 else { fatalError("AsyncCoreBenchmarks: pipe failed: errno \(errno)") }
  #if canImport(Darwin)
    var actions: posix_spawn_file_actions_t? = nil
  #else
    var actions = posix_spawn_file_actions_t()
  #endif
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  if discardingOutput {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
  } else {
    posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO)
  }
  posix_spawn_file_actions_adddup2(&actions, ends[1], STDERR_FILENO)
  posix_spawn_file_actions_addclose(&actions, ends[0])
  posix_spawn_file_actions_addclose(&actions, ends[1])

  let argv = ([executable] + arguments).map { strdup($0) } + [nil]
  defer { for argument in argv { free(argument) } }
  var pid: pid_t = 0
  let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
  close(ends[1])
  guard result == 0 else {
    close(ends[0])
    fatalError("AsyncCoreBenchmarks: could not start \(executable): error \(result)")
  }

  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65_536)
  while true {
    let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
    if count < 0 && errno == EINTR { continue }
    if count <= 0 { break }
    bytes += buffer[..<count]
  }
  close(ends[0])
  var exitStatus: Int32 = 0
  while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
  return String(decoding: bytes, as: UTF8.self)
}

/// The path of the running executable.
private func ownExecutable() -> String {
  #if os(Linux)
    var bytes = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &bytes, bytes.count - 1)
    if count > 0 { return String(decoding: bytes[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
  #endif
  return CommandLine.arguments[0]
}
