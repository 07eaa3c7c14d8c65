import AsyncCore
import AsyncCoreExampleSupport
import AsyncCorePropertySceneExample
import AsyncCorePropertySearchExample
import Dispatch

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
/// runs the commands and exits.
@main
struct PropertySceneMain {
  // An `@main` type rather than top-level code: top-level code runs on the
  // main actor, and every call into the core would hop back to it.
  static func main() async {
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
    // The workers, faked: their latency on the core's clock.
    let clock = ContinuousClock()
    let workers = Dependencies {
      $0.propertyAPI = FakePropertyAPI(latency: options.latency, clock: clock, isOffline: options.isOffline)
      $0.favourites = InMemoryFavourites(latency: options.latency, clock: clock)
    }
    let scene = Core(
      initialState: PropertyLogic(propertyID: options.propertyID), dependencies: workers, clock: clock,
      reducer: PropertyLogic.reducer)
    let isInteractive = options.commands.isEmpty && isatty(STDIN_FILENO) != 0
    let session = PropertySceneSession(core: scene, isInteractive: isInteractive, write: StandardStreams.output)
    _ = await session.run(lines: lines(options.commands))
  }

  /// `commands`, or if there are none the lines of standard input, read on
  /// a Dispatch thread: `readLine` blocks, and must not hold one of the few
  /// threads tasks run on.
  static func lines(_ commands: [String]) -> AsyncStream<String> {
    AsyncStream { continuation in
      guard commands.isEmpty else {
        for command in commands { continuation.yield(command) }
        continuation.finish()
        return
      }
      DispatchQueue(label: "standard input").async {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
      }
    }
  }
}
