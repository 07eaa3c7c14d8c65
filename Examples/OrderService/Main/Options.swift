import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreOrderServiceExample

/// The command line: `OrderService [--producers N] [--rate R] [--events N] [--duration S] [--refresh S]
/// [--journal PATH] [--acks] [--customers N [--store PATH [--max-active K] [--idle S]]]`.
struct Options {
  static let usage = """
    usage: OrderService [options]
      --producers N    producers sending orders at the same time (default 4)
      --rate R         orders per second from each producer, 0.001 to 1000000 (default 500)
      --events N       stop on its own after N orders in all
      --duration S     stop after S seconds (up to a year, 31536000), as Ctrl-C would
      --refresh S      draw the summary line at most every S seconds, 0.001 to 3600
                       (default 0.25 on a terminal, 1 otherwise)
      --journal PATH   keep the orders in a journal in the directory PATH: each is on disk
                       before it counts, and a restart on PATH resumes the totals
      --acks           print "ack P S" once producer P's order S is accepted (with --journal:
                       on disk)
      --customers N    one entity per customer, 1 to 1000000: each order goes to a random
                       customer's core, activated on its first order
      --store PATH     keep the customers in the SQLite file PATH, passivating idle ones; a
                       restart on PATH resumes their totals (with --customers)
      --max-active K   passivate the least recently used customers over K active (with --store)
      --idle S         passivate a customer idle for S seconds, 0.001 to 31536000 (with --store;
                       default 1)
    Ctrl-C stops it gracefully: no new orders, every accepted one reduced.
    """

  var configuration = OrderService.Configuration()
  var duration: Duration?
  /// The journal's directory (`--journal`); `nil`: orders in memory only.
  var journal: String?
  /// How many customers (`--customers`); `nil`: one core for all orders.
  var customers: Int?
  /// The customers' SQLite file (`--store`); `nil`: in memory.
  var store: String?
  /// When stored customers are passivated (`--max-active`, `--idle`).
  var passivation = Passivation(idleAfter: .seconds(1))
  var rate = 500.0
  var showsHelp = false

  /// The rate as typed: `500`, `0.5`.
  var rateText: String { rate == rate.rounded() && rate < 1e15 ? "\(Int(rate))" : "\(rate)" }

  /// Why the command line was refused; what it quotes of the arguments is
  /// escaped and bounded.
  struct Invalid: Error, CustomStringConvertible {
    var description: String
  }

  /// The options that take a value.
  private enum Valued: String {
    case producers = "--producers"
    case events = "--events"
    case rate = "--rate"
    case duration = "--duration"
    case refresh = "--refresh"
    case journal = "--journal"
    case customers = "--customers"
    case store = "--store"
    case maxActive = "--max-active"
    case idle = "--idle"
  }

  init(arguments: [String], isTerminal: Bool) throws(Invalid) {
    configuration.refresh = isTerminal ? .milliseconds(250) : .seconds(1)
    var arguments = arguments.makeIterator()
    var given: Set<Valued> = []
    while let argument = arguments.next() {
      if argument == "-h" || argument == "--help" {
        showsHelp = true
        continue
      }
      if argument == "--acks" {
        configuration.acknowledges = true
        continue
      }
      // Named as what it is before anything after it is read: an unknown
      // option is not one that "needs a value", whatever follows it.
      guard let option = Valued(rawValue: argument) else {
        throw Invalid(
          description: argument.hasPrefix("-")
            ? "unknown option \(argument.escapedForTerminal())"
            : "unexpected argument \(argument.escapedForTerminal()): OrderService takes options only")
      }
      guard let value = arguments.next() else { throw Invalid(description: "\(argument) needs a value") }
      switch option {
      case .producers: configuration.producers = try Self.number(value, argument, in: 1...1_000)
      case .events: configuration.totalOrders = try Self.number(value, argument, in: 0...Int.max)
      case .rate: rate = try Self.positive(value, argument, upTo: 1_000_000)
      case .duration: duration = .seconds(try Self.positive(value, argument, upTo: 31_536_000))
      case .refresh: configuration.refresh = .seconds(try Self.positive(value, argument, upTo: 3_600))
      case .journal:
        guard !value.isEmpty else { throw Invalid(description: "--journal takes a directory, not an empty path") }
        journal = value
      case .customers: customers = try Self.number(value, argument, in: 1...1_000_000)
      case .store:
        guard !value.isEmpty else { throw Invalid(description: "--store takes a file, not an empty path") }
        store = value
      case .maxActive: passivation.maxActive = try Self.number(value, argument, in: 1...1_000_000)
      case .idle: passivation.idleAfter = .seconds(try Self.positive(value, argument, upTo: 31_536_000))
      }
      given.insert(option)
    }
    configuration.interval = .seconds(1 / rate)
    try checkCombinations(given)
  }

  /// Refuses options that mean nothing together.
  private func checkCombinations(_ given: Set<Valued>) throws(Invalid) {
    if customers == nil {
      for option in [Valued.store, .maxActive, .idle] where given.contains(option) {
        throw Invalid(description: "\(option.rawValue) needs --customers N: it is about the customers' entities")
      }
      return
    }
    if given.contains(.journal) {
      throw Invalid(description: "--journal holds one core's orders; with --customers, --store PATH keeps them")
    }
    if configuration.acknowledges { throw Invalid(description: "--acks is the one core's; not with --customers") }
    if store == nil {
      for option in [Valued.maxActive, .idle] where given.contains(option) {
        throw Invalid(description: "\(option.rawValue) needs --store PATH: in memory, customers stay active")
      }
    }
  }

  private static func number(_ text: String, _ option: String, in range: ClosedRange<Int>) throws(Invalid) -> Int {
    guard let value = Int(text), range.contains(value) else {
      throw Invalid(
        description: "\(option) takes a whole number from \(range.lowerBound), not \"\(text.escapedForTerminal())\"")
    }
    return value
  }

  /// A number from 0.001 to `limit`: bounded, so that it makes a
  /// `Duration` (a rate's interval is its inverse) without overflowing.
  private static func positive(_ text: String, _ option: String, upTo limit: Double) throws(Invalid) -> Double {
    guard let value = Double(text), (0.001...limit).contains(value) else {
      throw Invalid(
        description: "\(option) takes a number from 0.001 to \(Int(limit)), not \"\(text.escapedForTerminal())\"")
    }
    return value
  }
}
