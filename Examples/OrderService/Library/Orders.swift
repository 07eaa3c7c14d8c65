import AsyncCore

/// Where an order comes from.
public enum Region: Int, CaseIterable, Sendable, Hashable, Codable {
  case europe, americas, asiaPacific

  /// Two letters for the summary line.
  public var code: String {
    switch self {
    case .europe: "EU"
    case .americas: "AM"
    case .asiaPacific: "AP"
    }
  }
}

/// One simulated order: the event the producers send.
public struct Order: Sendable, Equatable, Codable {
  /// The producer that placed it (think: the connection it came in on).
  public var producer: Int
  /// Its number among that producer's orders: 1, 2, 3, …
  public var sequence: Int
  public var region: Region
  /// Its amount, in cents.
  public var cents: Int

  public init(producer: Int, sequence: Int, region: Region, cents: Int) {
    self.producer = producer
    self.sequence = sequence
    self.region = region
    self.cents = cents
  }
}

/// Orders counted by region.
public struct RegionCounts: Sendable, Equatable, Codable {
  private var counts = [Int](repeating: 0, count: Region.allCases.count)

  public init() {}

  public subscript(region: Region) -> Int {
    get { counts[region.rawValue] }
    set { counts[region.rawValue] = newValue }
  }
}

/// The service's state: what the orders reduced so far add up to.
/// `Codable`, as its actions are, for a journal (`--journal`).
///
/// ```swift
/// let core = Core(initialState: Orders(), reducer: Orders.reduce)
/// core.send(.placed(order))
/// print(await core.state.reduced)  // 1
/// ```
public struct Orders: Sendable, Equatable, Codable {
  /// How many orders were reduced.
  public var reduced = 0
  /// Their total, in cents.
  public var revenueCents = 0
  public var byRegion = RegionCounts()
  /// The largest order so far (the first of equal amounts).
  public var largest: Order?
  /// The sequence number of each producer's last order, by producer. The
  /// core reduces one task's actions in the order it sent them, so each
  /// producer's orders arrive 1, 2, 3, …
  public var lastSequence: [Int: Int] = [:]
  /// Orders that did not follow their producer's previous one: always 0.
  public var outOfOrder = 0

  public init() {}
}

/// What the live summary line shows, all read from one state: a count with
/// the revenue, regions and largest order of the same orders.
///
/// ```swift
/// let summaries = await core.observe(\.summary)   // one value, not four
/// ```
public struct OrderSummary: Sendable, Equatable {
  /// How many orders were reduced.
  public var orders: Int
  /// Their total, in cents.
  public var revenueCents: Int
  /// Their counts by region.
  public var regions: RegionCounts
  /// The largest of them.
  public var largest: Order?

  public init(orders: Int = 0, revenueCents: Int = 0, regions: RegionCounts = RegionCounts(), largest: Order? = nil) {
    self.orders = orders
    self.revenueCents = revenueCents
    self.regions = regions
    self.largest = largest
  }
}

extension Orders {
  /// The figures the summary line shows, from this state.
  ///
  /// ```swift
  /// OrderService.summary(Orders().summary)  // "0 orders · $0.00 · EU 0 AM 0 AP 0 · largest -"
  /// ```
  public var summary: OrderSummary {
    OrderSummary(orders: reduced, revenueCents: revenueCents, regions: byRegion, largest: largest)
  }
}

/// What happens to the orders.
public enum OrderAction: Sendable, Equatable, Codable {
  /// A producer placed an order.
  case placed(Order)
}

extension Orders {
  /// The reducer: synchronous, run by the core one action at a time.
  @Sendable
  public static func reduce(_ state: inout Orders, _ action: OrderAction) {
    switch action {
    case .placed(let order):
      state.reduced += 1
      state.revenueCents += order.cents
      state.byRegion[order.region] += 1
      if order.cents > state.largest?.cents ?? 0 { state.largest = order }
      let previous = state.lastSequence[order.producer] ?? 0
      if order.sequence != previous + 1 { state.outOfOrder += 1 }
      state.lastSequence[order.producer] = order.sequence
    }
  }
}
