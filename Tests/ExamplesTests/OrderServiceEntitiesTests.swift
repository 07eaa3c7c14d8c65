import AsyncCore
import AsyncCoreOrderServiceExample
import AsyncCoreProcessTestSupport
import AsyncCoreTestSupport
import AsyncCoreTesting
import Testing

typealias CustomerStore = MemoryEntityStore<Int, Customer, CustomerAction>

@Suite("OrderService example: one entity per customer", .hangDetector)
struct OrderServiceEntitiesTests {
  // MARK: - The logic

  @Test("a customer counts and sums its orders, and checks that each producer's come in order")
  func reducer() {
    var customer = Customer(id: 7)
    let orders = [
      Order(producer: 0, sequence: 3, region: .europe, cents: 1_000),
      Order(producer: 1, sequence: 1, region: .americas, cents: 250),
      Order(producer: 0, sequence: 9, region: .europe, cents: 400),
      Order(producer: 0, sequence: 9, region: .europe, cents: 400),  // not after producer 0's last
    ]
    for order in orders { Customer.reduce(&customer, .placed(order)) }
    #expect(customer.orders == 4)
    #expect(customer.spentCents == 2_050)
    #expect(customer.lastSequence == [0: 9, 1: 1])
    #expect(customer.outOfOrder == 1)
  }

  @Test("a producer's customer feed is its order feed, each order for a customer in range, the same on every run")
  func feed() {
    var feed = CustomerFeed(producer: 2, customers: 50)
    let placed = (0..<1_000).map { _ in feed.next() }
    #expect(placed.map(\.order) == Array(OrderFeed(producer: 2).prefix(1_000)))
    #expect(placed.allSatisfy { (0..<50).contains($0.customer) })
    #expect(Set(placed.map(\.customer)).count == 50)
    var again = CustomerFeed(producer: 2, customers: 50)
    #expect((0..<1_000).map { _ in again.next().customer } == placed.map(\.customer))
  }

  @Test("the activity gives a line to the first few passivations and re-activations, and to every failure")
  func activity() {
    struct Broken: Error, CustomStringConvertible {
      var description: String { "disk full" }
    }
    var activity = CustomerActivity(samples: 2)
    #expect(activity.record(.activated(1)) == nil)  // a first activation: not news
    #expect(activity.record(.passivated(1)) == "passivated customer #1: its state stored, its core shut down")
    #expect(
      activity.record(.passivated(2))
        == "passivated customer #2: its state stored, its core shut down (the rest are counted, not shown)")
    #expect(activity.record(.passivated(3)) == nil)
    #expect(activity.record(.activated(1)) == "activated customer #1 again: its orders read back from the store")
    #expect(activity.record(.activated(4)) == nil)
    #expect(activity.record(.activated(2))?.hasSuffix("(the rest are counted, not shown)") == true)
    #expect(activity.record(.activated(3)) == nil)
    #expect(
      activity.record(.passivationFailed(5, Broken())) == "customer #5 could not be stored, it stays active: disk full")
    #expect(
      activity.record(.activationFailed(6, Broken()))
        == "customer #6 could not be activated, its orders are refused: disk full")
    #expect(activity.activations == 5 && activity.reactivations == 3 && activity.passivations == 3)
  }

  @Test("the totals add the customers up; their lines group thousands")
  func lines() {
    var totals = CustomerTotals()
    var busy = Customer(id: 412)
    busy.orders = 1_400
    busy.spentCents = 123_456_789
    busy.lastSequence = [0: 90, 1: 12]
    var quiet = Customer(id: 3)
    quiet.orders = 2
    quiet.spentCents = 1_005
    quiet.lastSequence = [0: 95]
    totals.add(quiet)
    totals.add(busy)
    totals.add(Customer(id: 9))
    #expect(totals.customers == 3 && totals.orders == 1_402 && totals.spentCents == 123_457_794)
    #expect(totals.lastSequence == [0: 95, 1: 12])
    #expect(
      CustomerService.summary(of: totals) == "3 customers: 1,402 orders · $1,234,577.94 · busiest #412 (1,400 orders)")
    #expect(CustomerService.summary(of: CustomerTotals()) == "0 customers: 0 orders · $0.00 · busiest -")
    #expect(
      CustomerService.resumed(totals)
        == "resumed 3 customers from the store: 1,402 orders · $1,234,577.94 · busiest #412 (1,400 orders)")
    #expect(
      CustomerService.progress(orders: 12_345, active: 100, activations: 1_245, passivations: 1_145)
        == "12,345 orders · 100 active · 1,245 activations · 1,145 passivations")
  }

  // MARK: - Runs

  @Test("in memory: every order placed is in its customer's state, read back through the registry")
  func inMemory() async throws {
    let collector = Collector()
    let service = CustomerService(
      configuration: .init(customers: 30, producers: 3, interval: nil, totalOrders: 301, refresh: nil),
      console: Console(isTerminal: false, write: collector.write))
    try await service.run()
    let report = try #require(service.report)
    let output = await collector.finish()

    #expect(report.accepted == 301 && report.lost == 0 && report.passivations == 0)
    #expect(report.totals == Self.expectedTotals(customers: 30, shares: [101, 100, 100]))
    #expect(report.line == "customers: 30, orders 301 (accepted 301, lost 0), passivations 0")
    #expect(output.suffix(2) == ["\(CustomerService.summary(of: report.totals))\n", "\(report.line)\n"])
  }

  @Test("on a store, over the limit, customers passivate and activate again; nothing is lost, and each is stored")
  func passivatesOverTheLimit() async throws {
    let store = CustomerStore()
    let collector = Collector()
    // A manual clock that never moves: no idle passivation, only the limit's.
    let service = CustomerService(
      configuration: .init(customers: 20, producers: 2, interval: nil, totalOrders: 200, refresh: nil),
      store: store, passivation: Passivation(idleAfter: nil, maxActive: 3), clock: ManualClock(),
      console: Console(isTerminal: false, write: collector.write))
    try await service.run()
    let report = try #require(service.report)
    let output = await collector.finish()

    #expect(report.accepted == 200 && report.lost == 0)
    #expect(report.recovered.orders == 0)  // a new store
    #expect(report.passivations > 0)
    let expected = Self.expectedCustomers(customers: 20, shares: [100, 100])
    #expect(report.totals == Self.totals(of: expected))
    // The shutdown stored every customer: each snapshot is exactly its orders.
    for customer in expected {
      #expect(store.stored(customer.id)?.snapshot == customer, "customer #\(customer.id)")
    }
    #expect(store.contents.withLock { $0.closed && $0.open.isEmpty })
    #expect(output.contains { $0.hasPrefix("passivated customer #") })
    #expect(output.last == "\(report.line)\n")
  }

  @Test("a second run on the same store resumes every customer's totals, and each producer goes on from its next order")
  func resumesFromTheStore() async throws {
    let first = CustomerStore()
    let firstService = CustomerService(
      configuration: .init(customers: 10, producers: 2, interval: nil, totalOrders: 40, refresh: nil),
      store: first, passivation: Passivation(idleAfter: nil, maxActive: 4), clock: ManualClock(),
      console: Console(isTerminal: false) { _ in })
    try await firstService.run()

    // What a restart finds: the first run's rows, in a store opened anew.
    let second = CustomerStore()
    let rows = first.contents.withLock { $0.stored }
    second.contents.withLock { $0.stored = rows }
    let collector = Collector()
    let service = CustomerService(
      configuration: .init(customers: 10, producers: 2, interval: nil, totalOrders: 30, refresh: nil),
      store: second, passivation: Passivation(idleAfter: nil, maxActive: 4), clock: ManualClock(),
      console: Console(isTerminal: false, write: collector.write))
    try await service.run()
    let report = try #require(service.report)
    let output = await collector.finish()

    #expect(report.recovered == Self.expectedTotals(customers: 10, shares: [20, 20]))
    #expect(report.accepted == 30 && report.lost == 0)
    // Orders 1…20 from the first run, 21…35 from this one: none twice, none skipped.
    let expected = Self.expectedCustomers(customers: 10, shares: [35, 35])
    #expect(report.totals == Self.totals(of: expected))
    for customer in expected { #expect(second.stored(customer.id)?.snapshot == customer) }
    #expect(output.first == "\(CustomerService.resumed(report.recovered))\n")
    #expect(report.line.hasPrefix("customers: 10, orders 70 (recovered 40, accepted 30, lost 0), passivations "))
  }

  @Test("cancelled mid-run, the service stops its producers, and every accepted order is still read back")
  func cancellation() async throws {
    let store = CustomerStore()
    let service = CustomerService(
      configuration: .init(customers: 50, producers: 4, interval: nil, totalOrders: nil, refresh: nil),
      store: store, passivation: Passivation(idleAfter: nil, maxActive: 5), clock: ManualClock(),
      console: Console(isTerminal: false) { _ in })
    var events = service.entities.events().makeAsyncIterator()
    let run = Task { try await service.run() }
    // Reading the 50 customers back first passivates each at most once;
    // past that, the orders' activations have passivated at least 10.
    var passivated = 0
    while passivated < 60, let event = await events.next() {
      if case .passivated = event { passivated += 1 }
    }
    run.cancel()
    try await run.value
    let report = try #require(service.report)
    #expect(report.accepted > 0 && report.lost == 0 && report.totals.outOfOrder == 0, "\(report)")
    #expect(report.totals.orders == report.accepted)
  }

  @Test("a service runs once")
  func runsOnce() async throws {
    let service = CustomerService(
      configuration: .init(customers: 1, producers: 1, interval: nil, totalOrders: 1, refresh: nil),
      console: Console(isTerminal: false) { _ in })
    try await service.run()
    await #expect(throws: CoreError.alreadyRunning) { try await service.run() }
  }

  // MARK: - The program

  @Test("`swift run OrderService --customers 100 --store PATH`: passivates over the limit; a restart resumes")
  func programOnAStore() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let store = scratch.path + "/customers.sqlite"
    let arguments = [
      "--customers", "100", "--store", store, "--max-active", "10", "--producers", "2", "--rate", "5000",
    ]

    let first = try ExampleProgram.start("OrderService", arguments: arguments + ["--events", "400"])
    defer { first.terminate() }
    let output = await first.allLines()
    #expect(await first.exitStatus() == .exited(0), "\(output.suffix(5))")
    #expect(
      output.first?.hasPrefix("OrderService: 2 producers at 5000 orders/s each, 400 orders for 100 customers") == true)
    #expect(output.contains { $0.hasPrefix("passivated customer #") })
    let last = try #require(output.last)
    let passivations = try #require(
      Self.passivations(last, prefix: "customers: 100, orders 400 (accepted 400, lost 0), passivations "), "\(last)")
    #expect(passivations > 0)
    let expected = Self.expectedTotals(customers: 100, shares: [200, 200])
    #expect(output.dropLast().last == CustomerService.summary(of: expected))

    let second = try ExampleProgram.start("OrderService", arguments: arguments + ["--events", "100"])
    defer { second.terminate() }
    let resumed = await second.allLines()
    #expect(await second.exitStatus() == .exited(0), "\(resumed.suffix(5))")
    #expect(resumed.contains(CustomerService.resumed(expected)))
    #expect(
      Self.passivations(
        resumed.last ?? "", prefix: "customers: 100, orders 500 (recovered 400, accepted 100, lost 0), passivations ")
        != nil, "\(resumed.suffix(3))")
    #expect(
      resumed.dropLast().last == CustomerService.summary(of: Self.expectedTotals(customers: 100, shares: [250, 250])))
  }

  @Test(
    "options that mean nothing together are refused with status 2",
    arguments: [
      (["--store", "x.sqlite"], "--store needs --customers N: it is about the customers' entities"),
      (["--idle", "1"], "--idle needs --customers N: it is about the customers' entities"),
      (["--customers", "5", "--max-active", "2"], "--max-active needs --store PATH: in memory, customers stay active"),
      (
        ["--customers", "5", "--journal", "j"],
        "--journal holds one core's orders; with --customers, --store PATH keeps them"
      ),
      (["--customers", "5", "--acks"], "--acks is the one core's; not with --customers"),
      (["--customers", "0"], "--customers takes a whole number from 1, not \"0\""),
      (["--customers", "5", "--store", ""], "--store takes a file, not an empty path"),
    ])
  func programRefusesCombinations(arguments: [String], problem: String) async throws {
    let program = try ExampleProgram.start("OrderService", arguments: arguments)
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(lines.first == "OrderService: \(problem)")
    #expect(await program.exitStatus() == .exited(2))
  }

  // MARK: - Helpers

  /// Each customer's state once producers 0, 1, 2… placed their shares.
  static func expectedCustomers(customers: Int, shares: [Int]) -> [Customer] {
    var states = (0..<customers).map(Customer.init(id:))
    for (producer, share) in shares.enumerated() {
      var feed = CustomerFeed(producer: producer, customers: customers)
      for _ in 0..<share {
        let (customer, order) = feed.next()
        Customer.reduce(&states[customer], .placed(order))
      }
    }
    return states
  }

  static func expectedTotals(customers: Int, shares: [Int]) -> CustomerTotals {
    totals(of: expectedCustomers(customers: customers, shares: shares))
  }

  static func totals(of customers: [Customer]) -> CustomerTotals {
    var totals = CustomerTotals()
    for customer in customers { totals.add(customer) }
    return totals
  }

  /// `812` in `"…, passivations 812"`, if the line begins with `prefix`.
  static func passivations(_ line: String, prefix: String) -> Int? {
    line.hasPrefix(prefix) ? Int(line.dropFirst(prefix.count)) : nil
  }
}
