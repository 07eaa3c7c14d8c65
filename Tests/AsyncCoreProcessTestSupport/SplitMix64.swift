/// A seeded pseudo-random generator (SplitMix64, Steele et al. 2014): the
/// same seed gives the same numbers on every platform and run, so a
/// randomized test replays from the seed it prints. Shared by the test
/// targets.
///
/// ```swift
/// var random = SplitMix64(seed: 42)
/// let steps = Int.random(in: 20...60, using: &random)
/// ```
package struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  package init(seed: UInt64) {
    state = seed
  }

  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }

  /// `true` with probability `percent` / 100.
  package mutating func chance(_ percent: Int) -> Bool {
    Int.random(in: 0..<100, using: &self) < percent
  }
}
