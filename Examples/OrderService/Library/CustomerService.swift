import AsyncCore
import Synchronization

/// OrderService's customers mode (`--customers N`): one entity per
/// customer, each an ordinary core holding that customer's orders, in an
/// `Entities` registry that activates a customer on its first order and,
/// on a store, passivates it when idle or over a limit.
///
/// ```swift
/// let service = CustomerService(configuration: .init(customers: 1_000, totalOrders: 5_000), console: console)
/// try await service.run()
/// print(service.report?.line ?? "")  // customers: 1000, orders 5000 (accepted 5000, lost 0), passivations 0
/// ```
///
/// A run: with a store, every customer is read back first (what a
/// previous run left); producers then place their ``CustomerFeed``'s
/// orders with `dispatch(_:to:)`, which waits while the customer
/// activates or passivates; a watcher logs a few of the registry's events
/// (``CustomerActivity``) and a ticker draws the progress line. Once the
/// producers are done, or the run is cancelled, every customer is read
/// back through the registry and summed, the registry shuts down (storing
/// every active customer), and the ``Report`` says whether each accepted
/// order is in some customer's state.
///
/// On a store (``init(configuration:store:passivation:clock:console:)``,
/// the program's `--store PATH`) a service started again resumes the
/// totals, and each producer goes on from its feed's next order.
public final class CustomerService: Sendable {
  /// How the service runs.
  public struct Configuration: Sendable {
    /// How many customers there are: ids 0 to `customers - 1`.
    public var customers: Int
    /// How many producers send orders at the same time (at least 1).
    public var producers: Int
    /// The pause each producer makes between two orders; `nil`: it only
    /// yields.
    public var interval: Duration?
    /// Orders to place in all, shared among the producers; `nil` runs
    /// until cancelled.
    public var totalOrders: Int?
    /// How often the progress line is drawn; `nil`: never.
    public var refresh: Duration?

    public init(
      customers: Int, producers: Int = 4, interval: Duration? = .milliseconds(2), totalOrders: Int? = nil,
      refresh: Duration? = .milliseconds(250)
    ) {
      self.customers = customers
      self.producers = producers
      self.interval = interval
      self.totalOrders = totalOrders
      self.refresh = refresh
    }

    /// The orders producer `index` places in this run.
    func limit(ofProducer index: Int) -> Int? {
      totalOrders.map { $0 / producers + (index < $0 % producers ? 1 : 0) }
    }
  }

  /// What a run did.
  public struct Report: Sendable, Equatable {
    /// Every customer, read back when the run began (all zeros without a
    /// store).
    public var recovered: CustomerTotals
    /// Orders a customer's `dispatch` accepted in this run.
    public var accepted: Int
    /// Every customer, read back through the registry at the end.
    public var totals: CustomerTotals
    /// Passivations while the orders were placed (not the final read-back's
    /// nor the shutdown's).
    public var passivations: Int

    /// Recovered and accepted orders that are in no customer's state: 0.
    public var lost: Int { recovered.orders + accepted - totals.orders }

    /// The last line the service writes:
    /// `customers: 1000, orders 5000 (accepted 5000, lost 0), passivations 812`, or after a restart on
    /// a store `customers: 1000, orders 10000 (recovered 5000, accepted 5000, lost 0), passivations 790`.
    public var line: String {
      let recovered = recovered.orders == 0 ? "" : "recovered \(recovered.orders), "
      return "customers: \(totals.customers), orders \(totals.orders) (\(recovered)accepted \(accepted), lost \(lost)),"
        + " passivations \(passivations)"
    }
  }

  /// The registry of customers. Tests read it; a service would keep it
  /// private.
  public let entities: Entities<Int, Customer, CustomerAction>
  /// Whether the customers are kept in a store, and passivated.
  public let isStored: Bool
  public let configuration: Configuration
  private let clock: any Clock<Duration>
  private let dashboard: Dashboard
  private let hasStarted = Atomic(false)
  /// Orders accepted so far in the run, for the progress line.
  private let placed = Atomic(0)
  private let lastReport = Mutex<Report?>(nil)

  /// A service whose customers stay in memory, and active, until the run
  /// ends.
  public convenience init(
    configuration: Configuration, clock: any Clock<Duration> = ContinuousClock(), console: Console
  ) {
    let entities = Entities<Int, Customer, CustomerAction>(
      clock: clock, initialState: { Customer(id: $0) }, reducer: Reduce(Customer.reduce))
    self.init(configuration: configuration, entities: entities, isStored: false, clock: clock, console: console)
  }

  /// A service whose customers are kept in `store`, passivated as
  /// `passivation` says, and resumed from it by the next run.
  ///
  /// ```swift
  /// let store = try SQLiteEntityStore<Int, Customer, CustomerAction>(path: "customers.sqlite")
  /// let service = CustomerService(
  ///   configuration: .init(customers: 1_000), store: store,
  ///   passivation: Passivation(idleAfter: .seconds(1), maxActive: 100), console: console)
  /// ```
  public convenience init(
    configuration: Configuration, store: some EntityStore<Int, Customer, CustomerAction>, passivation: Passivation,
    clock: any Clock<Duration> = ContinuousClock(), console: Console
  ) {
    let entities = Entities(
      store: store, passivation: passivation, clock: clock, initialState: { Customer(id: $0) },
      reducer: Reduce(Customer.reduce))
    self.init(configuration: configuration, entities: entities, isStored: true, clock: clock, console: console)
  }

  private init(
    configuration: Configuration, entities: Entities<Int, Customer, CustomerAction>, isStored: Bool,
    clock: any Clock<Duration>, console: Console
  ) {
    if configuration.customers < 1 { fatalError("a CustomerService needs at least one customer") }
    if configuration.producers < 1 { fatalError("a CustomerService needs at least one producer") }
    if let total = configuration.totalOrders, total < 0 { fatalError("totalOrders cannot be negative: \(total)") }
    self.configuration = configuration
    self.entities = entities
    self.isStored = isStored
    self.clock = clock
    self.dashboard = Dashboard(console: console, refresh: configuration.refresh)
  }

  /// What the run did, once `run()` has returned; `nil` before.
  public var report: Report? { lastReport.withLock { $0 } }

  /// Writes `line` to the console above the progress line.
  public func log(_ line: String) async {
    await dashboard.log(line)
  }

  private enum ChildTaskResult: Sendable {
    case producer(accepted: Int, failure: CoreError?)
    case watcher
  }

  /// Runs the service until its producers are done or the calling task is
  /// cancelled, then writes the customers' totals and the ``Report/line``.
  ///
  /// - Throws: ``CoreError/alreadyRunning`` if it was called before;
  ///   ``CoreError/journal(_:)`` if a customer cannot be read back.
  public func run() async throws(CoreError) {
    guard hasStarted.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
      throw .alreadyRunning
    }
    let entities = entities
    let dashboard = dashboard
    let configuration = configuration
    var recovered = CustomerTotals()
    if isStored {
      recovered = try await readBackAndSettle()
      if recovered.orders > 0 { await dashboard.log(Self.resumed(recovered)) }
    }
    // From here on: the read-back's activations and passivations are not
    // the orders'.
    let baseline = entities.metrics
    let events = entities.events()

    let (accepted, failure) = await withTaskGroup(of: ChildTaskResult.self) { group in
      group.addTask {
        var activity = CustomerActivity()
        for await event in events {
          if let line = activity.record(event) { await dashboard.log(line) }
        }
        return .watcher
      }
      if let refresh = configuration.refresh {
        group.addTask {
          // Real time, whatever clock paces the producers: this is for the eye.
          while (try? await Task.sleep(for: refresh)) != nil {
            let now = entities.metrics
            await dashboard.draw(
              line: Self.progress(
                orders: self.placed.load(ordering: .relaxed), active: now.active,
                activations: now.activations - baseline.activations,
                passivations: now.passivations - baseline.passivations))
          }
          return .watcher
        }
      }
      for index in 0..<configuration.producers {
        let producer = CustomerProducer(
          index: index, customers: configuration.customers, limit: configuration.limit(ofProducer: index),
          interval: configuration.interval, after: recovered.lastSequence[index] ?? 0)
        group.addTask {
          let result = await producer.run(into: entities, clock: self.clock) {
            self.placed.add(1, ordering: .relaxed)
          }
          return .producer(accepted: result.accepted, failure: result.failure)
        }
      }
      var accepted = 0
      var producersLeft = configuration.producers
      var failure: CoreError?
      while producersLeft > 0, let result = await group.next() {
        guard case .producer(let count, let error) = result else { continue }
        accepted += count
        failure = failure ?? error
        producersLeft -= 1
      }
      // The watchers: the shutdown's passivations are not samples.
      group.cancelAll()
      return (accepted, failure)
    }
    if let failure { await dashboard.log("producer stopped: \(failure)") }

    let passivations = entities.metrics.passivations - baseline.passivations
    // In a task of its own: a cancelled run still reads every customer
    // (a cancelled caller would not wait for a passive one's activation).
    let reading = Task { () async -> Result<CustomerTotals, CoreError> in
      do throws(CoreError) { return .success(try await readBack()) } catch { return .failure(error) }
    }
    let totals: CustomerTotals
    switch await reading.value {
    case .success(let read): totals = read
    case .failure(let error):
      await entities.shutdown()
      throw error
    }
    await entities.shutdown()
    let report = Report(recovered: recovered, accepted: accepted, totals: totals, passivations: passivations)
    lastReport.withLock { $0 = report }
    await dashboard.finish(Self.summary(of: totals))
    await dashboard.finish(report.line)
  }

  /// ``readBack()`` on a registry nothing else has used yet, returning
  /// once the passivations it caused have ended: their events are not
  /// the orders'.
  private func readBackAndSettle() async throws(CoreError) -> CustomerTotals {
    var events = entities.events(limit: 1).makeAsyncIterator()
    let totals = try await readBack()
    // Each customer was activated once, so those not active are
    // passivated, or still passivating while these differ.
    while true {
      let now = entities.metrics
      if now.activations - now.passivations == now.active { break }
      guard await events.next() != nil else { break }
    }
    return totals
  }

  /// Every customer's state, read through the registry (activating the
  /// passive ones), summed.
  private func readBack() async throws(CoreError) -> CustomerTotals {
    var totals = CustomerTotals()
    for id in 0..<configuration.customers { totals.add(try await entities.state(of: id)) }
    return totals
  }

  /// The progress line: `2,345 orders · 100 active · 1,245 activations · 1,145 passivations`.
  public static func progress(orders: Int, active: Int, activations: Int, passivations: Int) -> String {
    "\(Money.grouped(orders)) orders · \(Money.grouped(active)) active · \(Money.grouped(activations)) activations"
      + " · \(Money.grouped(passivations)) passivations"
  }

  /// The totals' line: `1,000 customers: 5,000 orders · $1,262,213.45 · busiest #412 (14 orders)`.
  public static func summary(of totals: CustomerTotals) -> String {
    "\(Money.grouped(totals.customers)) customers: \(figures(of: totals))"
  }

  /// The first line on a store that holds orders:
  /// `resumed 1,000 customers from the store: 5,000 orders · $1,262,213.45 · busiest #412 (14 orders)`.
  public static func resumed(_ totals: CustomerTotals) -> String {
    "resumed \(Money.grouped(totals.customers)) customers from the store: \(figures(of: totals))"
  }

  private static func figures(of totals: CustomerTotals) -> String {
    "\(Money.grouped(totals.orders)) orders · \(Money.format(totals.spentCents))"
      + " · busiest \(totals.busiest.map { "#\($0.id) (\(Money.grouped($0.orders)) orders)" } ?? "-")"
  }
}

/// Customers' states summed, as read back through the registry.
///
/// ```swift
/// var totals = CustomerTotals()
/// totals.add(try await entities.state(of: 7))
/// ```
public struct CustomerTotals: Sendable, Equatable {
  public var customers = 0
  public var orders = 0
  public var spentCents = 0
  /// Summed over the customers: 0.
  public var outOfOrder = 0
  /// Each producer's last order for any customer: where its feed goes on.
  public var lastSequence: [Int: Int] = [:]
  /// The customer with the most orders (the first of equal counts).
  public var busiest: Customer?

  public init() {}

  public mutating func add(_ customer: Customer) {
    customers += 1
    orders += customer.orders
    spentCents += customer.spentCents
    outOfOrder += customer.outOfOrder
    lastSequence.merge(customer.lastSequence, uniquingKeysWith: max)
    if customer.orders > busiest?.orders ?? 0 { busiest = customer }
  }
}

/// One producer in customers mode: places its feed's orders, each with
/// the customer's `dispatch`, one after another.
struct CustomerProducer: Sendable {
  let index: Int
  let customers: Int
  let limit: Int?
  let interval: Duration?
  /// The sequence of its last order placed before (in the store).
  let after: Int

  /// Places orders until the limit, cancellation, or the registry refusing
  /// one, calling `onAccepted` after each accepted order; returns how many
  /// were accepted, and the error if that is why it stopped.
  func run(
    into entities: Entities<Int, Customer, CustomerAction>, clock: any Clock<Duration>,
    accepted onAccepted: @Sendable () -> Void
  ) async -> (accepted: Int, failure: CoreError?) {
    var feed = CustomerFeed(producer: index, customers: customers)
    for _ in 0..<after { _ = feed.next() }
    var accepted = 0
    while accepted != limit, !Task.isCancelled {
      let (customer, order) = feed.next()
      do {
        // Returns once reduced (with a store, once stored too), after the
        // customer's activation if it was passive.
        try await entities.dispatch(.placed(order), to: customer)
      } catch .shutDown {
        break
      } catch .cancelled {
        break  // the run was cancelled while the customer activated: not placed
      } catch {
        return (accepted, error)
      }
      accepted += 1
      onAccepted()
      if accepted == limit { break }
      if let interval {
        do { try await clock.sleep(for: interval) } catch { break }
      } else {
        await Task.yield()
      }
    }
    return (accepted, nil)
  }
}
