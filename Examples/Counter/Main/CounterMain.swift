import AsyncCore
import AsyncCoreCounterExample
import AsyncCoreExampleSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `swift run Counter` to type commands; `swift run Counter + + step 5 + q`
/// (or commands piped in) to run them and exit. Ctrl-C ends it as `q` does.
@main
struct CounterMain {
  // An `@main` type rather than top-level code: top-level code runs on the
  // main actor, and every call into the core would hop back to it.
  static func main() async {
    StandardStreams.endQuietlyWhenTheReaderLeaves()
    let arguments = CommandLine.arguments.dropFirst().joined(separator: " ")
    if arguments == "-h" || arguments == "--help" {
      StandardStreams.output(
        "usage: Counter [COMMAND…]\n  \(CounterCommand.help)\n  without commands, reads them from standard input\n")
      return
    }
    // Commands given on the command line are checked before anything runs,
    // so a typo in a script fails it.
    if !arguments.isEmpty {
      do {
        _ = try CounterCommand.parse(arguments)
      } catch {
        StandardStreams.error("Counter: \(error)\n")
        exit(2)
      }
    }
    let isInteractive = arguments.isEmpty && isatty(STDIN_FILENO) != 0
    // The end of the input (Ctrl-D, Ctrl-C) ends the prompt's line first.
    let lines = InputLines(
      arguments.isEmpty ? [] : [arguments], thenStandardInput: arguments.isEmpty,
      onEnd: { if isInteractive { StandardStreams.output("\n") } })
    // Before the first line: Ctrl-C from now on ends the session as `q` does.
    let interrupt = await Interrupt { lines.end() }
    StandardStreams.output("Counter (Unicore's example): \(CounterCommand.help)\n")
    let core = Core(initialState: Counter(), reducer: Reduce(Counter.reduce))
    let session = CounterSession(core: core) { line in StandardStreams.output("\(line)\n") }
    let prompt: @Sendable () -> Void = { if isInteractive { StandardStreams.output("> ") } }
    // A terminal has shown what was typed; piped or given commands are echoed.
    _ = await session.run(lines: lines, echo: !isInteractive, prompt: prompt)
    interrupt.stop()
  }
}
