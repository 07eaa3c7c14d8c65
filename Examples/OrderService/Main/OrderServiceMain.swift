import AsyncCoreExampleSupport
import AsyncCoreOrderServiceExample

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `swift run OrderService`: producers send simulated orders into a core
/// until Ctrl-C; the service then stops taking orders, reduces every one it
/// accepted, and says how many.
///
/// `swift run OrderService --journal orders.journal` keeps the orders in a
/// journal: each is on disk before it counts, and the next run on the same
/// directory, after Ctrl-C, a crash or `kill -9`, resumes the totals
/// (`resumed N orders from the journal: …`). With `--acks` it prints
/// `ack P S` for each order on disk, which a crash cannot lose:
///
///     swift run OrderService --journal /tmp/orders.journal --acks --refresh 3600
///     kill -9 <its pid>                      # mid-stream
///     swift run OrderService --journal /tmp/orders.journal --events 0
///     # resumed N orders from the journal: producer 0 through #…, …
///     # reduced N events (recovered N, accepted 0, lost 0)
@main
struct OrderServiceMain {
  /// Why the service stopped.
  private enum Ending: Sendable {
    case finished  // the producers placed all their orders (--events)
    case interrupted  // Ctrl-C
    case timeUp  // --duration
    case cancelled  // a watcher ended because another child ended first
  }

  // An `@main` type rather than top-level code: top-level code runs on the
  // main actor, and every call into the core would hop back to it.
  static func main() async {
    StandardStreams.endQuietlyWhenTheReaderLeaves()
    let isTerminal = isatty(STDOUT_FILENO) != 0
    let options: Options
    do {
      options = try Options(arguments: Array(CommandLine.arguments.dropFirst()), isTerminal: isTerminal)
    } catch {
      StandardStreams.error("OrderService: \(error)\n\(Options.usage)\n")
      exit(2)
    }
    if options.showsHelp {
      StandardStreams.output("\(Options.usage)\n")
      return
    }

    // Before the first line: a Ctrl-C from now on is ours. The first one
    // stops the service; a second ends the process at once.
    let (interrupts, interrupted) = AsyncStream.makeStream(of: Void.self)
    let interrupt = await Interrupt {
      interrupted.yield()
      interrupted.finish()
    }
    let console = Console(isTerminal: isTerminal, write: StandardStreams.output)
    let service: OrderService
    if let journal = options.journal {
      do {
        service = try await OrderService(configuration: options.configuration, journal: journal, console: console)
      } catch {
        StandardStreams.error("OrderService: cannot open the journal: \(error)\n")
        exit(1)
      }
    } else {
      service = OrderService(configuration: options.configuration, console: console)
    }
    let configuration = options.configuration
    console.write(
      "OrderService: \(configuration.producers) producers at \(options.rateText) orders/s each"
        + "\(configuration.totalOrders.map { ", \($0) orders" } ?? "")"
        + "\(options.journal.map { ", journal \($0.escapedForTerminal())" } ?? ""). Ctrl-C stops it.\n")

    // The service beside its watchers, as a ServiceGroup runs services: the
    // first child to end decides, and cancelling the others is the shutdown.
    await withTaskGroup(of: Ending.self) { group in
      group.addTask {
        do {
          try await service.run()
        } catch {
          StandardStreams.error("OrderService: \(error)\n")  // run twice: cannot happen here
        }
        return .finished
      }
      group.addTask {
        for await _ in interrupts { return .interrupted }
        return .cancelled
      }
      if let duration = options.duration {
        group.addTask {
          do {
            try await Task.sleep(for: duration)
            return .timeUp
          } catch {
            return .cancelled
          }
        }
      }
      switch await group.next() {
      case .interrupted:
        await service.log("interrupted: no new orders; reducing the accepted ones")
      case .timeUp:
        await service.log("time is up: no new orders; reducing the accepted ones")
      case .finished, .cancelled, nil:
        break
      }
      group.cancelAll()
    }
    interrupt.stop()
    guard let report = service.report, report.lost == 0 else { exit(1) }
  }
}
