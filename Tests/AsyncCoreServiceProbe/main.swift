// The child process of the ServiceLifecycle trait's SIGTERM test
// (Tests/AsyncCoreIntegrationTests/ServiceGroupProcessTests.swift):
//
//   AsyncCoreServiceProbe run DIR      a ServiceGroup with a durable core (a FileJournal in DIR,
//                                      .everyAction) and a till that dispatches `.add` and prints
//                                      "ack N" after each; SIGTERM is the group's graceful shutdown;
//                                      prints "stopped N" (the core's count after it stopped), exits 0
//   AsyncCoreServiceProbe recover DIR  prints "recovered N": the count recovered from DIR
//
// Without the ServiceLifecycle trait it says so and exits 2.
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

#if ServiceLifecycle
  import AsyncCore
  import AsyncCoreJournal
  import Logging
  import ServiceLifecycle

  struct Count: Codable, Sendable {
    var value = 0
  }

  enum Step: Codable, Sendable {
    case add
  }

  let reduceCount = Reduce<Count, Step> { count, _ in count.value += 1 }

  /// One line to standard output, unbuffered: the parent reads it after the dispatch returned.
  func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var done = 0
    while done < bytes.count {
      let written = bytes[done...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
      if written < 0, errno == EINTR { continue }
      if written <= 0 { return }
      done += written
    }
  }

  /// Dispatches until the group shuts down gracefully, printing each acknowledgement.
  struct Till: Service {
    let core: Core<Count, Step>

    func run() async throws {
      var acknowledged = 0
      while !Task.isShuttingDownGracefully {
        try await core.dispatch(.add)
        acknowledged += 1
        say("ack \(acknowledged)")
      }
    }
  }

  let arguments = CommandLine.arguments
  guard arguments.count == 3 else {
    say("usage: AsyncCoreServiceProbe run|recover DIR")
    exit(2)
  }
  let journal = try FileJournal<Count, Step>(directory: arguments[2], durability: .everyAction)
  let core = try await Core(initialState: Count(), journal: journal, reducer: reduceCount)
  switch arguments[1] {
  case "run":
    var logger = Logger(label: "probe")
    logger.logLevel = .critical
    // The group shuts the till down first (reverse order), then the core.
    let group = ServiceGroup(services: [core, Till(core: core)], gracefulShutdownSignals: [.sigterm], logger: logger)
    try await group.run()
    say("stopped \(await core.state.value)")
  case "recover":
    say("recovered \(await core.state.value)")
    await core.shutdown()
  default:
    say("unknown mode \(arguments[1])")
    exit(2)
  }
#else
  print("AsyncCoreServiceProbe needs the ServiceLifecycle trait")
  exit(2)
#endif
