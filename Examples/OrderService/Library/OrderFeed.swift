/// The orders one producer places, in order: `next()` gives order 1, then
/// 2, and so on, with amounts and regions drawn from a generator seeded by
/// the producer's number, so a run can be checked against the same feed.
///
/// ```swift
/// var feed = OrderFeed(producer: 3)
/// let first = feed.next()  // producer 3, sequence 1, the same on every run
/// ```
public struct OrderFeed: Sendable, IteratorProtocol, Sequence {
  private let producer: Int
  private var sequence = 0
  private var random: SplitMix64

  public init(producer: Int) {
    self.producer = producer
    self.random = SplitMix64(seed: UInt64(truncatingIfNeeded: producer) &+ 0x5EED)
  }

  /// The next order: never `nil`, the feed is endless.
  public mutating func next() -> Order? {
    nextOrder()
  }

  /// The next order.
  public mutating func nextOrder() -> Order {
    sequence += 1
    let region = Region.allCases[Int.random(in: 0..<Region.allCases.count, using: &random)]
    return Order(
      producer: producer, sequence: sequence, region: region, cents: Int.random(in: 100...50_000, using: &random))
  }
}

/// Steele, Lea and Flood's SplitMix64: a small seeded generator, the same on
/// every platform (the system generator cannot be seeded).
struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
