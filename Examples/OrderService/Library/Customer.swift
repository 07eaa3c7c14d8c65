import AsyncCore

/// One customer's orders and totals: the state of one entity in the
/// service's customers mode (`--customers N`), one per customer id.
/// `Codable`, as its actions are, for an entity store (`--store`).
///
/// ```swift
/// var customer = Customer(id: 7)
/// Customer.reduce(&customer, .placed(order))
/// print(customer.orders)  // 1
/// ```
public struct Customer: Sendable, Equatable, Codable {
  /// The customer's id, 0 to `customers - 1`.
  public var id: Int
  /// How many orders the customer placed.
  public var orders = 0
  /// Their total, in cents.
  public var spentCents = 0
  /// The sequence number of each producer's last order for this customer,
  /// by producer: increasing, since an entity reduces one task's actions
  /// in the order sent, across passivations too.
  public var lastSequence: [Int: Int] = [:]
  /// Orders that did not come after their producer's previous one for
  /// this customer: always 0.
  public var outOfOrder = 0

  public init(id: Int) {
    self.id = id
  }
}

/// What happens to a customer.
public enum CustomerAction: Sendable, Equatable, Codable {
  /// A producer placed an order for the customer.
  case placed(Order)
}

extension Customer {
  /// Every customer's reducer: synchronous, run by the customer's own core.
  @Sendable
  public static func reduce(_ state: inout Customer, _ action: CustomerAction) {
    switch action {
    case .placed(let order):
      state.orders += 1
      state.spentCents += order.cents
      if order.sequence <= state.lastSequence[order.producer] ?? 0 { state.outOfOrder += 1 }
      state.lastSequence[order.producer] = order.sequence
    }
  }
}

/// The orders one producer places in customers mode: its ``OrderFeed``'s
/// orders, each for a customer drawn from a generator seeded by the
/// producer's number, so a run, and a resumed run, can be checked against
/// the same feed.
///
/// ```swift
/// var feed = CustomerFeed(producer: 3, customers: 1_000)
/// let (customer, order) = feed.next()  // the same on every run
/// ```
public struct CustomerFeed: Sendable {
  private var orders: OrderFeed
  private var random: SplitMix64
  private let customers: Int

  public init(producer: Int, customers: Int) {
    if customers < 1 { fatalError("a CustomerFeed needs at least one customer") }
    self.orders = OrderFeed(producer: producer)
    self.random = SplitMix64(seed: UInt64(truncatingIfNeeded: producer) &+ 0xC057)
    self.customers = customers
  }

  /// The next order and the customer it is for.
  public mutating func next() -> (customer: Int, order: Order) {
    (Int.random(in: 0..<customers, using: &random), orders.nextOrder())
  }
}
