struct Divergence: Error, Sendable, CustomStringConvertible {
  var seed: UInt64 = 0
  var step = 0
  var operation = ""
  /// A short name of the failed check, for the summary.
  let check: String
  let detail: String
  /// The guarantees the check itself relies on.
  var items: Set<Guarantee>
  /// The guarantees the sequence had relied on before it diverged.
  var exercised: Set<Guarantee> = []
  var trace: [String]?

  var summary: String {
    items.isEmpty ? check : "\(check) [\(Self.list(items))]"
  }

  var description: String {
    var text = """
      Model divergence, seed \(seed), step \(step) (\(operation)): \(summary): \(detail)
      Semantics the sequence relied on so far: \(exercised.isEmpty ? "none of the named guarantees" : Self.list(exercised)).
      Replay this sequence alone, printing its operations: \
      ASYNCCORE_MODEL_SEED=\(seed) swift test --disable-xctest --filter ModelBasedTests
      """
    if let trace { text += "\nOperations:\n" + trace.joined(separator: "\n") }
    return text
  }

  static func list(_ items: Set<Guarantee>) -> String {
    Guarantee.allCases.filter(items.contains).map(\.rawValue).joined(separator: "; ")
  }
}

/// A documented guarantee of the core that a check or a whole sequence
/// relies on, named in a divergence so that a reader sees which rule broke.
enum Guarantee: String, Sendable, Hashable, CaseIterable {
  case latestAgainstLastTaken = "a latest observer deduplicates against the value it last took"
  case everyCallDeduplicates = "every observing call deduplicates Equatable values, states() included"
  case cancelIDsMatchByTypeAndValue = "cancel ids match only by type and value"
  case handlesFinishedAfterShutdown = "every handle is finished once shutdown(.immediate) returned"
  case hasShutDownAgrees = "hasShutDown agrees with refusal"
  case followUpsBreadthFirst = ".send follow-ups are reduced breadth first, before dispatch returns"
  case refusedEffectsReported = "follow-ups are still reduced during shutdown(.immediate); refused effects are reported"
}
