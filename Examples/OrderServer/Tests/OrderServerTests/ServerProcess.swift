import Foundation
import Synchronization
import Testing

/// `order-server`, built beside the test binary, in a child process: its
/// port read from the line it prints once listening, its output kept.
final class ServerProcess: Sendable {
  let port: Int
  private let process: Process
  private let output: Output
  private let exit: Task<Int32, Never>

  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  static func start(_ arguments: [String]) async throws -> ServerProcess {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("order-server")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw Failure(description: "\(executable.path) is missing: build it with the tests (swift build --build-tests)")
    }
    let process = Process()
    process.executableURL = executable
    process.arguments = ["--port", "0"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    let output = Output()
    let (lines, lineSink) = AsyncStream<String>.makeStream()
    let (exited, exitSink) = AsyncStream<Int32>.makeStream()
    process.terminationHandler = { process in
      exitSink.yield(
        process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus)
      exitSink.finish()
    }
    try process.run()
    // Read on a thread of its own until the child's end of the pipe closes.
    let reading = pipe.fileHandleForReading
    Thread.detachNewThread {
      var partial = ""
      while true {
        let data = reading.availableData
        if data.isEmpty { break }
        partial += String(decoding: data, as: UTF8.self)
        while let newline = partial.firstIndex(of: "\n") {
          let line = String(partial[..<newline])
          partial.removeSubrange(...newline)
          output.text.withLock { $0 += line + "\n" }
          lineSink.yield(line)
        }
      }
      lineSink.finish()
    }
    var port: Int?
    for await line in lines {
      if line.hasPrefix("listening on "), let number = line.split(separator: ":").last.flatMap({ Int($0) }) {
        port = number
        break
      }
    }
    let exit = Task {
      var codes = exited.makeAsyncIterator()
      return await codes.next() ?? -1
    }
    guard let port else {
      throw Failure(description: "order-server ended before listening (status \(await exit.value))")
    }
    return ServerProcess(port: port, process: process, output: output, exit: exit)
  }

  private init(port: Int, process: Process, output: Output, exit: Task<Int32, Never>) {
    self.port = port
    self.process = process
    self.output = output
    self.exit = exit
  }

  func signal(_ number: Int32) {
    kill(process.processIdentifier, number)
  }

  /// SIGTERM, then the exit status.
  func terminate() async -> Int32 {
    signal(SIGTERM)
    return await status
  }

  /// The exit status, or minus the signal that ended it.
  var status: Int32 {
    get async { await exit.value }
  }

  var printed: String {
    output.text.withLock { $0 }
  }
}

/// What the child printed, shared with the thread that reads it.
private final class Output: Sendable {
  let text = Mutex("")
}

/// Expects each acknowledged order reference in `seen` (reference → the
/// times the customers' states hold it) exactly once, and nothing there
/// that was never attempted.
func expectEachAcknowledgedOnce(
  seen: [String: Int], acknowledged: some Collection<String>, attempted: Set<String>
) {
  let missing = acknowledged.filter { seen[$0] == nil }
  let twice = seen.filter { $0.value > 1 }.map(\.key)
  let invented = seen.keys.filter { !attempted.contains($0) }
  #expect(missing.count == 0, "acknowledged but lost: \(missing.sorted().prefix(10))")
  #expect(twice.count == 0, "reduced twice: \(twice.sorted().prefix(10))")
  #expect(invented.count == 0, "never sent: \(invented.sorted().prefix(10))")
}
