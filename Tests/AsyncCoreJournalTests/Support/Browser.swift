import AsyncCoreProcessTestSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Headless Chromium, run as a child process on a page, within a deadline.
enum Browser {
  /// The names the browser is looked up by on `PATH`, in order.
  static let names = ["chromium", "chromium-browser"]

  /// The browser's path, or `nil` when none of ``names`` is on `PATH`.
  static let path: String? = {
    let folders = (Environment.string("PATH") ?? "/usr/bin:/bin").split(separator: ":")
    for name in names {
      for folder in folders where access("\(folder)/\(name)", X_OK) == 0 {
        return "\(folder)/\(name)"
      }
    }
    return nil
  }()

  /// `ASYNCCORE_REQUIRE_BROWSER=1`: a missing browser fails the browser
  /// tests instead of skipping them (CI sets it).
  static var isRequired: Bool { Environment.string("ASYNCCORE_REQUIRE_BROWSER") == "1" }

  /// What a test records when the browser is required and missing.
  static let missing =
    "no chromium or chromium-browser on PATH, and ASYNCCORE_REQUIRE_BROWSER=1: install it "
    + "(Debian/Ubuntu: `apt-get install chromium`; macOS: put Chromium or Chrome on PATH as `chromium`)"

  /// What one run of the browser left: its exit status (128 + the signal
  /// when killed), its standard output and its standard error, and whether
  /// the deadline killed it.
  struct Run {
    var status: Int32
    var output: String
    var errors: String
    var timedOut: Bool
  }

  /// Runs `browser` headless with `arguments` then `url`, its profile in a
  /// folder of `scratch`, and waits for it: if it has not ended `deadline`
  /// seconds after starting, its process group is killed. The default is
  /// for a browser that hangs, not a slow one: a run takes a second or two
  /// here, tens of seconds on a loaded machine, and the wait cannot be
  /// cancelled by the test's time limit.
  ///
  /// Its standard output and error go to files in `scratch` (through
  /// `/bin/sh`), never to a pipe: a helper process that outlived the browser
  /// could hold a pipe open, but not stop `waitpid` from returning.
  static func run(
    _ browser: String, _ arguments: [String], url: String, in scratch: String, deadline: Int = 200
  ) async throws -> Run {
    let output = scratch + "/browser.out"
    let errors = scratch + "/browser.err"
    let command =
      [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
        "--disable-extensions", "--disable-dev-shm-usage", "--user-data-dir=\(scratch)/browser-profile",
      ] + arguments + [url]
    return try await blocking {
      let child = try spawn(
        "/bin/sh", arguments: ["-c", #"o=$1 e=$2; shift 2; exec "$@" > "$o" 2> "$e""#, "sh", output, errors] + command)
      close(child.input)
      close(child.output)
      let watch = Watch(pid: child.pid)
      DispatchQueue(label: "browser deadline").asyncAfter(deadline: .now() + .seconds(deadline)) { watch.expire() }
      let status = watch.waitForExit()
      return Run(
        status: status, output: text(of: output), errors: text(of: errors), timedOut: watch.timedOut)
    }
  }

  private static func text(of path: String) -> String {
    String(decoding: contents(of: path), as: UTF8.self)
  }
}

/// A child process and its deadline: whichever comes first, the child
/// ending or the deadline, decides; a deadline that passes kills the
/// child's process group (its helpers too).
///
/// The child is waited for without being reaped (`WNOWAIT`) before it is
/// marked as ended: until it is reaped its id, and so its process group's,
/// cannot be given to another process, so a late `kill` can only reach it.
// Safety: `ended` and `expired` are read and written only under `lock`.
private final class Watch: @unchecked Sendable {
  let pid: pid_t
  private let lock = NSLock()
  private var ended = false
  private var expired = false

  init(pid: pid_t) {
    self.pid = pid
  }

  var timedOut: Bool { lock.withLock { expired } }

  /// Called at the deadline: kills the group unless the child has ended.
  func expire() {
    lock.withLock {
      guard !ended else { return }
      expired = true
      kill(-pid, SIGKILL)
    }
  }

  /// Waits for the child to end, kills what is left of its group, reaps it,
  /// and returns its exit code, or 128 + the signal.
  func waitForExit() -> Int32 {
    var info = siginfo_t()
    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    lock.withLock {
      ended = true
      kill(-pid, SIGKILL)  // a helper the browser left behind
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
  }
}
