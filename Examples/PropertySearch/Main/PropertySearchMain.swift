import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreJournal
import AsyncCorePropertySearchExample

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `swift run PropertySearch`: type a place, then a result's number; `back`,
/// a link, `q`. Links and commands may be given as arguments:
/// `swift run PropertySearch asynccore://property/42`,
/// `swift run PropertySearch Leeds 2 back q`. Ctrl-C ends it as `q` does, at
/// once, even while a request runs; a `q` typed while a request runs is
/// read once its answer has come. `report FILE` writes a bug report of the
/// session; `swift run PropertySearch inspect list FILE` reads it (and
/// `state`, `diff`, `html`, `verify`: the inspector with this example's
/// types).
@main
struct PropertySearchMain {
  // An `@main` type rather than top-level code: top-level code runs on the
  // main actor, and every call into the core would hop back to it.
  static func main() async {
    StandardStreams.endQuietlyWhenTheReaderLeaves()
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "inspect" {
      // `PropertySearch inspect list report.json`: the inspector, with this
      // example's types and reducer, so that state, diff and html replay.
      exit(Inspector.run(Array(arguments.dropFirst()), initialState: PropertySearch(), reducer: PropertySearch.reducer))
    }
    let options: PropertySearchOptions
    do {
      options = try PropertySearchOptions(arguments: arguments)
    } catch {
      StandardStreams.error("PropertySearch: \(error)\n")
      if case .option = error { StandardStreams.error("\(PropertySearchOptions.usage)\n") }
      exit(2)
    }
    if options.showsHelp {
      StandardStreams.output("\(PropertySearchOptions.usage)\n")
      return
    }
    let isTerminal = options.readsStandardInput && isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0
    let lines = InputLines(options.lines, thenStandardInput: options.readsStandardInput)
    // The fake network's latency runs on the core's clock.
    let clock = ContinuousClock()
    let api = FakePropertyAPI(latency: options.latency, clock: clock, isOffline: options.isOffline)
    let core = Core(
      initialState: PropertySearch(), dependencies: Dependencies { $0.propertyAPI = api }, clock: clock,
      reducer: PropertySearch.reducer)
    let session = PropertySearchSession(core: core, isTerminal: isTerminal, write: StandardStreams.output)
    // Before the first screen: Ctrl-C from now on ends the session as `q`
    // does, without waiting for a request in flight.
    await Interrupt.runSession(ending: lines) { _ = await session.run(lines: lines) }
  }
}
