import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreJournal
import AsyncCoreLoginExample

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `swift run Login`: type a phone number, then the code the fake server
/// shows as an SMS; `resend` once the countdown has ended, `back`, `q`.
/// Piped input runs the same way and ends at its end:
/// `printf '555 0100\n424242\n' | swift run Login --code 424242`. Ctrl-C ends
/// it as `q` does, at once, even while a request runs; a `q` typed while a
/// request runs is read once its answer has come. `report FILE` writes a
/// bug report of the session; `swift run Login inspect list FILE` reads it
/// (and `state`, `diff`, `html`, `verify`: the inspector with this
/// example's types).
@main
struct LoginMain {
  // An `@main` type rather than top-level code: top-level code runs on the
  // main actor, and every call into the core would hop back to it.
  static func main() async {
    StandardStreams.endQuietlyWhenTheReaderLeaves()
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "inspect" {
      // `Login inspect list report.json`: the inspector, with this
      // example's types and reducer, so that state, diff and html replay.
      exit(Inspector.run(Array(arguments.dropFirst()), initialState: Login(), reducer: Login.reducer))
    }
    let options: LoginOptions
    do {
      options = try LoginOptions(arguments: arguments)
    } catch {
      StandardStreams.error("Login: \(error)\n\(LoginOptions.usage)\n")
      exit(2)
    }
    if options.showsHelp {
      StandardStreams.output("\(LoginOptions.usage)\n")
      return
    }
    let lines = InputLines()
    let display = LoginDisplay(isTerminal: isatty(STDOUT_FILENO) != 0, write: StandardStreams.output)
    let code = options.code
    // The network, faked: its latency on a continuous clock, as the core's.
    let server = FakeOTPServer(
      latency: options.latency,
      codes: { _ in code ?? FakeOTPServer.randomCode() },
      deliver: { sms in await display.deliver(sms) })
    let core = Core(
      initialState: Login(countdownLength: options.countdown), dependencies: Dependencies { $0.otpServer = server },
      reducer: Login.reducer)
    let session = LoginSession(core: core, display: display)
    // Before the first screen: Ctrl-C from now on ends the session as `q`
    // does, without waiting for a request in flight.
    await Interrupt.runSession(ending: lines) { _ = await session.run(lines: lines) }
  }
}
