import AsyncCore
import AsyncCoreJournal
import AsyncCorePostgres
import AsyncCoreSQLite
import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle

/// How `order-server` runs, from its command line (``usage``).
public struct ServerOptions: Sendable, Equatable {
  /// What `--help` prints.
  public static let usage = """
    usage: order-server [--host 127.0.0.1] [--port 8080]
                        [--store PATH | --postgres postgres://USER@HOST:PORT/DB [--namespace orderserver]]
                        [--durability every-action|operating-system]
                        [--max-active N] [--idle SECONDS] [--mailbox N] [--baseline]
    --durability, --max-active and --idle apply to a store; --port 0 picks a free port.
    On --postgres, processes share the customers, each active in one of them;
    HOST:PORT names this one to the others, which redirect to it.
    """
  /// `--help` was given: print ``usage`` and run nothing.
  public var help = false
  public var host = "127.0.0.1"
  /// 0 picks a free port; the server prints the one it bound.
  public var port = 8080
  /// A SQLite file for every customer's journal; nil keeps them in memory.
  public var store: String?
  /// A PostgreSQL server every process shares the customers on; nil for none.
  public var postgres: PostgresURL?
  /// The prefix of the store's tables on `postgres`.
  public var namespace = "orderserver"
  public var durability = Durability.everyAction
  /// The most customers active at once (the rest passivated), on a store.
  public var maxActive: Int?
  /// Seconds idle before a customer passivates, on a store.
  public var idleSeconds = 120
  /// Each customer's mailbox capacity: past it, a POST gets 503.
  public var mailbox = 1_024
  /// The load report's baseline: a dictionary behind a lock, no entities.
  public var baseline = false

  public enum Durability: String, Sendable {
    case everyAction = "every-action"
    case operatingSystem = "operating-system"
  }

  public init() {}

  /// Parses `arguments` (without the program's name).
  public init(arguments: [String]) throws(UsageError) {
    var rest = arguments[...]
    func value(_ flag: String) throws(UsageError) -> String {
      guard let value = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
      return value
    }
    func number(_ flag: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
      let text = try value(flag)
      guard let number = Int(text), range.contains(number) else {
        throw UsageError("\(flag) takes a whole number from \(range.lowerBound) to \(range.upperBound), not \(text)")
      }
      return number
    }
    while let flag = rest.popFirst() {
      switch flag {
      case "--host": host = try value(flag)
      case "--port": port = try number(flag, in: 0...65_535)
      case "--help", "-h": help = true
      case "--store":
        let path = try value(flag)
        guard !path.isEmpty else { throw UsageError("--store needs a path, not an empty one") }
        store = path
      case "--postgres": postgres = try PostgresURL(try value(flag))
      case "--namespace":
        let text = try value(flag)
        guard Self.isNamespace(text) else {
          throw UsageError(
            "--namespace is 1 to 40 lowercase letters, digits or '_', starting with a letter, not \(text)")
        }
        namespace = text
      case "--durability":
        let text = try value(flag)
        guard let parsed = Durability(rawValue: text) else {
          throw UsageError("--durability is every-action or operating-system, not \(text)")
        }
        durability = parsed
      case "--max-active": maxActive = try number(flag, in: 1...100_000_000)
      case "--idle": idleSeconds = try number(flag, in: 1...86_400)
      case "--mailbox": mailbox = try number(flag, in: 1...1_000_000)
      case "--baseline": baseline = true
      default: throw UsageError("unknown option \(flag) (--help lists them)")
      }
    }
    if store == nil, postgres == nil, let flag = Self.storeOnly.first(where: arguments.contains) {
      throw UsageError("\(flag) applies to a --store or --postgres, and neither was given")
    }
    if postgres == nil, arguments.contains("--namespace") {
      throw UsageError("--namespace applies to --postgres, and none was given")
    }
    if postgres != nil {
      if store != nil { throw UsageError("--store and --postgres are two stores: give one") }
      if baseline { throw UsageError("--baseline keeps no store: --postgres does not apply") }
      if port == 0 {
        throw UsageError("--postgres needs a --port other than 0: HOST:PORT names this process to the others")
      }
    }
  }

  /// What other processes redirect to for the customers this one holds.
  public var owner: String { "\(host):\(port)" }

  private static let storeOnly = ["--durability", "--max-active", "--idle"]

  private static func isNamespace(_ text: String) -> Bool {
    guard let first = text.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), text.utf8.count <= 40
    else { return false }
    return text.utf8.allSatisfy { byte in
      (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        || byte == UInt8(ascii: "_")
    }
  }
}

public struct UsageError: Error, CustomStringConvertible {
  public var description: String
  init(_ description: String) { self.description = description }
}

/// Customers as entities: in memory, journaled in the SQLite file, or on
/// the PostgreSQL server that other processes share.
public func makeCustomers(
  _ options: ServerOptions, logger: Logger
) async throws -> Entities<String, Customer, CustomerAction> {
  let diagnostics = EffectFailure.log(to: logger)
  let durability: JournalDurability = options.durability == .everyAction ? .everyAction : .operatingSystem
  let store: any EntityStore<String, Customer, CustomerAction>
  if let path = options.store {
    store = try SQLiteEntityStore<String, Customer, CustomerAction>(
      path: path, durability: durability, diagnostics: diagnostics)
  } else if let postgres = options.postgres {
    store = try await PostgresEntityStore<String, Customer, CustomerAction>(
      configuration: postgres.configuration, owner: options.owner, namespace: options.namespace,
      durability: durability, logger: logger, diagnostics: diagnostics)
  } else {
    return Entities(
      mailboxCapacity: options.mailbox, diagnostics: diagnostics, initialState: { _ in Customer() },
      reducer: Customer.reducer)
  }
  return Entities(
    store: store, passivation: Passivation(idleAfter: .seconds(options.idleSeconds), maxActive: options.maxActive),
    mailboxCapacity: options.mailbox, diagnostics: diagnostics, initialState: { _ in Customer() },
    reducer: Customer.reducer)
}

/// Runs the server until SIGTERM or SIGINT, in a `ServiceGroup`: the HTTP
/// server drains first (in-flight requests complete), then the registry
/// shuts down (every accepted action reduced, every customer stored).
/// `onListening` gets the bound address once the server accepts.
public func runServer(
  _ options: ServerOptions, logger: Logger, onListening: @escaping @Sendable (String, Int) -> Void
) async throws {
  let registry = PrometheusCollectorRegistry()
  let factory = PrometheusMetricsFactory(registry: registry)
  var services: [any Service] = []
  let backend: any CustomerBackend
  if options.baseline {
    backend = BaselineBackend()
  } else {
    let customers = try await makeCustomers(options, logger: logger)
    backend = EntitiesBackend(customers, dispatching: options.postgres != nil)
    services += [customers, MetricsReporter(customers: customers, factory: factory)]
  }
  let application = Application(
    router: makeRouter(backend: backend, metrics: registry),
    configuration: ApplicationConfiguration(address: .hostname(options.host, port: options.port)),
    onServerRunning: { channel in
      onListening(options.host, channel.localAddress?.port ?? options.port)
    },
    logger: logger)
  services.append(application)
  // Shut down in reverse: the server, then the reporter, then the registry.
  let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
  try await group.run()
}

/// Reports the registry's metrics each second until the group shuts down.
struct MetricsReporter: Service {
  let customers: Entities<String, Customer, CustomerAction>
  let factory: PrometheusMetricsFactory

  func run() async throws {
    await cancelWhenGracefulShutdown {
      await customers.reportMetrics(every: .seconds(1), factory: factory)
    }
  }
}
