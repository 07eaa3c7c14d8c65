import AsyncCore

/// One customer's orders: the state of one entity, kept per customer id.
public struct Customer: Sendable, Equatable, Codable {
  /// Every order placed, in the order the customer's core reduced them.
  public var orders: [PlacedOrder] = []
  /// The sum of the amounts of the orders not cancelled, in cents.
  public var totalCents = 0

  public init() {}
}

/// An order as the customer's state keeps it.
public struct PlacedOrder: Sendable, Equatable, Codable {
  /// The caller's name for the order; unique per customer by convention,
  /// not enforced, so a duplicate in a state means an action reduced twice.
  public var reference: String
  public var amountCents: Int
  public var cancelled = false

  public init(reference: String, amountCents: Int, cancelled: Bool = false) {
    self.reference = reference
    self.amountCents = amountCents
    self.cancelled = cancelled
  }
}

/// What a `POST /customers/{id}/actions` carries, as JSON:
/// `{"place":{"reference":"r-1","amountCents":250}}` or
/// `{"cancel":{"reference":"r-1"}}`.
public enum CustomerAction: Sendable, Equatable, Codable {
  case place(reference: String, amountCents: Int)
  case cancel(reference: String)

  /// Why the action cannot be taken as it is, in one line; nil when it can.
  public var invalidReason: String? {
    let reference: String
    switch self {
    case .place(let placed, let amount):
      guard (1...100_000_000).contains(amount) else { return "amountCents must be 1 to 100000000" }
      reference = placed
    case .cancel(let cancelled):
      reference = cancelled
    }
    guard (1...64).contains(reference.utf8.count) else { return "reference must be 1 to 64 bytes" }
    return nil
  }
}

extension Customer {
  /// Every customer's reducer, run by the customer's own core.
  public static let reducer = Reduce<Customer, CustomerAction> { customer, action in
    switch action {
    case .place(let reference, let amount):
      customer.orders.append(PlacedOrder(reference: reference, amountCents: amount))
      customer.totalCents += amount
    case .cancel(let reference):
      // The first open order with the reference; an unknown one changes nothing.
      if let index = customer.orders.firstIndex(where: { $0.reference == reference && !$0.cancelled }) {
        customer.orders[index].cancelled = true
        customer.totalCents -= customer.orders[index].amountCents
      }
    }
  }
}
