struct Divergence: Error, Sendable, CustomStringConvertible {
  var seed: UInt64 = 0
  var step = 0
  var operation = ""
  /// A short name of the failed check, for the summary.
  let check: String
  let detail: String
  /// The semantics items the check itself relies on.
  var items: Set<Int>
  /// The semantics items the sequence had relied on before it diverged.
  var exercised: Set<Int> = []
  var trace: [String]?

  var summary: String {
    items.isEmpty ? check : "\(check) [\(Self.list(items))]"
  }

  var description: String {
    var text = """
      Model divergence, seed \(seed), step \(step) (\(operation)): \(summary): \(detail)
      Semantics the sequence relied on so far: \(exercised.isEmpty ? "no numbered item" : Self.list(exercised)).
      Replay this sequence alone, printing its operations: \
      ASYNCCORE_MODEL_SEED=\(seed) swift test --disable-xctest --filter ModelTests
      """
    if let trace { text += "\nOperations:\n" + trace.joined(separator: "\n") }
    return text
  }

  static func list(_ items: Set<Int>) -> String {
    (items.count == 1 ? "item " : "items ") + items.sorted().map(String.init).joined(separator: ", ")
  }
}
