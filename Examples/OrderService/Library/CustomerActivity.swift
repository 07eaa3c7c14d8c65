import AsyncCore

/// What the customers' registry did, told readably: thousands of
/// passivations would be thousands of lines, so it gives a line for each
/// of the first few passivations and re-activations (an entity read back
/// from the store), and a line for every failure; the counts are the
/// progress line's.
///
/// ```swift
/// var activity = CustomerActivity(samples: 3)
/// for await event in entities.events() {
///   if let line = activity.record(event) { print(line) }
/// }
/// ```
public struct CustomerActivity: Sendable {
  /// How many lines each kind of event gets at most.
  public let samples: Int
  public private(set) var activations = 0
  /// Activations of a customer passivated earlier in this run.
  public private(set) var reactivations = 0
  public private(set) var passivations = 0
  private var passivated: Set<Int> = []

  public init(samples: Int = 3) {
    self.samples = samples
  }

  /// Counts `event`, and returns the line it gets, if any.
  public mutating func record(_ event: EntityEvent<Int>) -> String? {
    switch event {
    case .activated(let id):
      activations += 1
      guard passivated.contains(id) else { return nil }
      reactivations += 1
      return reactivations > samples
        ? nil : "activated customer #\(id) again: its orders read back from the store\(more(reactivations))"
    case .passivated(let id):
      passivations += 1
      passivated.insert(id)
      return passivations > samples
        ? nil : "passivated customer #\(id): its state stored, its core shut down\(more(passivations))"
    case .activationFailed(let id, let error):
      return "customer #\(id) could not be activated, its orders are refused: \(error)"
    case .passivationFailed(let id, let error):
      return "customer #\(id) could not be stored, it stays active: \(error)"
    }
  }

  /// What the last sample line adds.
  private func more(_ count: Int) -> String {
    count == samples ? " (the rest are counted, not shown)" : ""
  }
}
