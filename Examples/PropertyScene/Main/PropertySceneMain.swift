import AsyncCore
import AsyncCoreExampleSupport
import AsyncCorePropertySceneExample
import AsyncCorePropertySearchExample

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `swift run PropertyScene`: the detail of property 42 as a
/// Display-Logic-Core scene; type save, contact, book, back, q.
/// `swift run PropertyScene asynccore://property/43 save contact back q`
/// runs the commands and exits. Ctrl-C ends it as `q` does, at once, even
/// while a request runs (the first load too); a `q` typed while a request
/// runs is read once its answer has come.
@main
struct PropertySceneMain {
  // An `@main` type rather than top-level code: top-level code runs on the
  // main actor, and every call into the core would hop back to it.
  static func main() async {
    StandardStreams.endQuietlyWhenTheReaderLeaves()
    let options: PropertySceneOptions
    do {
      options = try PropertySceneOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    } catch {
      StandardStreams.error("PropertyScene: \(error)\n")
      if case .option = error { StandardStreams.error("\(PropertySceneOptions.usage)\n") }
      exit(2)
    }
    if options.showsHelp {
      StandardStreams.output("\(PropertySceneOptions.usage)\n")
      return
    }
    let isInteractive = options.commands.isEmpty && isatty(STDIN_FILENO) != 0
    // The commands given, or if there are none the lines of standard input;
    // their end (Ctrl-D, Ctrl-C) ends the prompt's line first.
    let lines = InputLines(
      options.commands, thenStandardInput: options.commands.isEmpty,
      onEnd: { if isInteractive { StandardStreams.output("\n") } })
    // The workers, faked: their latency on the core's clock.
    let clock = ContinuousClock()
    let workers = Dependencies {
      $0.propertyAPI = FakePropertyAPI(latency: options.latency, clock: clock, isOffline: options.isOffline)
      $0.favourites = InMemoryFavourites(latency: options.latency, clock: clock)
    }
    let scene = Core(
      initialState: PropertyLogic(propertyID: options.propertyID), dependencies: workers, clock: clock,
      reducer: PropertyLogic.reducer)
    let session = PropertySceneSession(core: scene, isInteractive: isInteractive, write: StandardStreams.output)
    // Before the first screen: Ctrl-C from now on ends the session as `q`
    // does, without waiting for a request in flight.
    await Interrupt.runSession(ending: lines) { _ = await session.run(lines: lines) }
  }
}
