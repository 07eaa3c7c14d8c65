#if ServiceLifecycle
  import AsyncCoreProcessTestSupport
  import Foundation
  import Testing

  @Suite("ServiceLifecycle trait: SIGTERM to a service process", .timeLimit(.minutes(5)))
  struct ServiceGroupProcessTests {
    @Test(
      "SIGTERM mid-flood: the group stops the till, then the core; every acknowledged action is reduced and on disk; exit 0"
    )
    func sigterm() async throws {
      let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asynccore-sigterm-\(UUID())").path
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let probe = try productPath("AsyncCoreServiceProbe")
      // Blocking reads, on a thread of their own rather than the test pool's.
      let run = try await withCheckedThrowingContinuation { continuation in
        onThreadOfItsOwn { continuation.resume(with: Result { try SigtermRun(probe: probe, directory: directory) }) }
      }
      #expect(run.acknowledgedBeforeSignal == 200)
      #expect(run.runExit == 0)
      let count = try #require(run.stopped, "the probe printed no \"stopped\" line")
      // The till's last dispatch may be reduced after the signal without being printed.
      #expect(count == run.acknowledged || count == run.acknowledged + 1)
      #expect(run.recovered == "recovered \(count)")
      #expect(run.recoverExit == 0)
    }
  }

  /// The probe run until 200 acknowledgements, sent SIGTERM, read to its end; then recovered.
  private struct SigtermRun {
    var acknowledgedBeforeSignal = 0
    var acknowledged = 0
    var stopped: Int?
    var runExit: Int32 = -1
    var recovered: String?
    var recoverExit: Int32 = -1

    init(probe: String, directory: String) throws {
      let running = LineReader(try spawn(probe, arguments: ["run", directory]))
      while acknowledged < 200, let line = running.nextLine() {
        if line.hasPrefix("ack ") { acknowledged = Int(line.dropFirst(4)) ?? acknowledged }
      }
      acknowledgedBeforeSignal = acknowledged
      kill(running.child.pid, SIGTERM)
      while let line = running.nextLine() {
        if line.hasPrefix("ack ") { acknowledged = Int(line.dropFirst(4)) ?? acknowledged }
        if line.hasPrefix("stopped ") { stopped = Int(line.dropFirst(8)) }
      }
      runExit = running.exitStatus()
      let recovering = LineReader(try spawn(probe, arguments: ["recover", directory]))
      recovered = recovering.nextLine()
      recoverExit = recovering.exitStatus()
    }
  }

  /// A child's output, a line at a time, with blocking reads.
  private final class LineReader {
    let child: SpawnedProcess
    private var buffer: [UInt8] = []
    private var ended = false

    init(_ child: SpawnedProcess) {
      self.child = child
      close(child.input)
    }

    deinit { close(child.output) }

    func nextLine() -> String? {
      while true {
        if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
          defer { buffer.removeSubrange(...newline) }
          return String(decoding: buffer[..<newline], as: UTF8.self)
        }
        if ended { return nil }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(child.output, &chunk, chunk.count)
        if count < 0, errno == EINTR { continue }
        if count <= 0 { ended = true } else { buffer += chunk[..<count] }
      }
    }

    /// Waits for it to end: its exit code, or 128 + the signal that ended it.
    func exitStatus() -> Int32 {
      var status: Int32 = 0
      while waitpid(child.pid, &status, 0) < 0, errno == EINTR {}
      let signal = status & 0x7f
      return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
  }
#endif
