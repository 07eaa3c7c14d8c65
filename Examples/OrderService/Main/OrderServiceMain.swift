import AsyncCore
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
///
/// `swift run OrderService --customers 1000 --store /tmp/customers.sqlite --max-active 100`
/// keeps one entity per customer, passivated into the SQLite file; it ends
/// with `customers: 1000, orders N (accepted N, lost 0), passivations P`.
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
    let service = await makeService(options, console: console)
    console.write(startLine(options))

    // The service beside its watchers, as a ServiceGroup runs services: the
    // first child to end decides, and cancelling the others is the shutdown.
    await withTaskGroup(of: Ending.self) { group in
      group.addTask {
        do {
          try await service.run()
        } catch {
          // A customer the store cannot read back (run twice cannot happen here).
          StandardStreams.error("OrderService: \(error)\n")
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
    guard service.lostNone else { exit(1) }
  }

  private static func makeService(_ options: Options, console: Console) async -> Service {
    let configuration = options.configuration
    if let customers = options.customers {
      let customerConfiguration = CustomerService.Configuration(
        customers: customers, producers: configuration.producers, interval: configuration.interval,
        totalOrders: configuration.totalOrders, refresh: configuration.refresh)
      guard let path = options.store else {
        return .customers(CustomerService(configuration: customerConfiguration, console: console))
      }
      do {
        return .customers(
          try CustomerService(
            configuration: customerConfiguration, store: path, passivation: options.passivation, console: console))
      } catch {
        StandardStreams.error("OrderService: cannot open the store: \(error)\n")
        exit(1)
      }
    }
    guard let journal = options.journal else {
      return .orders(OrderService(configuration: configuration, console: console))
    }
    do {
      return .orders(try await OrderService(configuration: configuration, journal: journal, console: console))
    } catch {
      StandardStreams.error("OrderService: cannot open the journal: \(error)\n")
      exit(1)
    }
  }

  /// `OrderService: 4 producers at 500 orders/s each, 5000 orders, …. Ctrl-C stops it.`
  private static func startLine(_ options: Options) -> String {
    let configuration = options.configuration
    var line = "OrderService: \(configuration.producers) producers at \(options.rateText) orders/s each"
    if let total = configuration.totalOrders { line += ", \(total) orders" }
    if let journal = options.journal { line += ", journal \(journal.escapedForTerminal())" }
    if let customers = options.customers {
      line += " for \(customers) customers"
      if let store = options.store {
        let idle = options.passivation.idleAfter.map { "idle after \(seconds($0)) s" }
        let limit = options.passivation.maxActive.map { "at most \($0) active" }
        line += ", store \(store.escapedForTerminal()) (\([limit, idle].compactMap { $0 }.joined(separator: ", ")))"
      } else {
        line += ", in memory"
      }
    }
    return line + ". Ctrl-C stops it.\n"
  }

  /// `1.5` for 1.5 seconds, `2` for 2.
  private static func seconds(_ duration: Duration) -> String {
    let (whole, attoseconds) = duration.components
    if attoseconds == 0 { return "\(whole)" }
    return "\(Double(whole) + Double(attoseconds) / 1e18)"
  }
}

/// The service a command line asks for: one core for every order, or one
/// entity per customer (`--customers`).
private enum Service: Sendable {
  case orders(OrderService)
  case customers(CustomerService)

  func run() async throws(CoreError) {
    switch self {
    case .orders(let service): try await service.run()
    case .customers(let service): try await service.run()
    }
  }

  func log(_ line: String) async {
    switch self {
    case .orders(let service): await service.log(line)
    case .customers(let service): await service.log(line)
    }
  }

  /// Whether the run ended with every accepted order reduced.
  var lostNone: Bool {
    switch self {
    case .orders(let service): service.report?.lost == 0
    case .customers(let service): service.report?.lost == 0
    }
  }
}
