#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the benchmark was asked to do.
struct Options {
  var quick = false
  var filter: String?
  var jsonPath: String?
  var markdownPath: String?

  init(arguments: [String]) {
    var remaining = arguments.dropFirst()
    var markdown: String?? = nil
    while let argument = remaining.popFirst() {
      switch argument {
      case "--quick": quick = true
      case "--filter": filter = remaining.popFirst()
      case "--json": jsonPath = remaining.popFirst()
      case "--markdown": markdown = .some(remaining.popFirst())
      case "--no-markdown": markdown = .some(nil)
      case "--help", "-h":
        print(Self.usage)
        exit(0)
      default:
        print("Unknown option \(argument)\n\(Self.usage)")
        exit(2)
      }
    }
    // A full, unfiltered run writes Benchmarks.md; a quick or filtered one
    // only when asked, so a smoke run never replaces the real figures.
    markdownPath = markdown ?? (quick || filter != nil ? nil : "Benchmarks.md")
  }

  static let usage = """
    Usage: swift run -c release AsyncCoreBenchmarks [--quick] [--filter NAME] [--json PATH] [--markdown PATH | --no-markdown]
      --quick          a short smoke run (CI, under a minute); rougher figures
      --filter NAME    run only the families whose title contains NAME:
                       dispatch, fan-out, executor, subscribers, sustained, selectors, memory, scopes, composition,
                       effects, journal (its durable-core baselines alone: baselines), inspect, entities, load
      --json PATH      also write every figure as JSON
      --markdown PATH  write the report there (a full run writes Benchmarks.md)
      --no-markdown    write no report
    """

  /// Rounds per benchmark; each round runs every contender once, interleaved.
  var rounds: Int { quick ? 3 : 7 }

  func includes(_ title: String) -> Bool {
    guard let filter else { return true }
    return title.lowercased().contains(filter.lowercased())
  }
}

/// One contender in a benchmark: a name and a measurement returning how many
/// operations it did and how long they took.
struct Contender: Sendable {
  let name: String
  let isBaseline: Bool
  let measure: @Sendable () async -> Sample

  static func baseline(_ name: String, _ measure: @escaping @Sendable () async -> Sample) -> Contender {
    Contender(name: name, isBaseline: true, measure: measure)
  }

  static func core(_ name: String, _ measure: @escaping @Sendable () async -> Sample) -> Contender {
    Contender(name: name, isBaseline: false, measure: measure)
  }
}

struct Sample: Sendable {
  let operations: Int
  let duration: Duration

  var perSecond: Double { Double(operations) / duration.seconds }
}

extension Duration {
  var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) * 1e-18
  }
}

/// Times `body`, which performs `operations` operations.
func measure(operations: Int, _ body: () async -> Void) async -> Sample {
  let clock = ContinuousClock()
  let start = clock.now
  await body()
  return Sample(operations: operations, duration: clock.now - start)
}

/// The throughput of each contender over interleaved rounds: median, min, max.
struct ThroughputResult {
  let name: String
  let isBaseline: Bool
  let perSecond: [Double]

  var median: Double { perSecond.sorted()[perSecond.count / 2] }
  var min: Double { perSecond.min() ?? 0 }
  var max: Double { perSecond.max() ?? 0 }
}

/// Runs every contender once per round, in rotating order so that none
/// always runs first (warm caches) or last, and collects their throughput.
func runInterleaved(_ contenders: [Contender], rounds: Int) async -> [ThroughputResult] {
  var figures = Array(repeating: [Double](), count: contenders.count)
  for round in 0..<rounds {
    for offset in contenders.indices {
      let index = (offset + round) % contenders.count
      // Measure on a detached task: never from the main actor, whose hops
      // cost 40–100 times an ordinary task's.
      let contender = contenders[index]
      let sample = await Task.detached { await contender.measure() }.value
      figures[index].append(sample.perSecond)
    }
  }
  return zip(contenders, figures).map {
    ThroughputResult(name: $0.name, isBaseline: $0.isBaseline, perSecond: $1)
  }
}

func formatRate(_ perSecond: Double) -> String {
  switch perSecond {
  case 1e6...: return "\(fixed(perSecond / 1e6, 2))M/s"
  case 1e3...: return "\(fixed(perSecond / 1e3, 1))k/s"
  default: return "\(fixed(perSecond, 0))/s"
  }
}

func formatDuration(_ seconds: Double) -> String {
  switch seconds {
  case ..<1e-6: return "\(fixed(seconds * 1e9, 0)) ns"
  case ..<1e-3: return "\(fixed(seconds * 1e6, 1)) µs"
  case ..<1: return "\(fixed(seconds * 1e3, 2)) ms"
  default: return "\(fixed(seconds, 2)) s"
  }
}

/// Which side of a target's threshold a figure must be on.
enum Bound {
  case atLeast
  case atMost
}

/// Whether `value`, rounded to `digits` decimals as `fixed(_:_:)` prints it,
/// is on the `bound` side of `threshold`.
///
/// Judging the printed figure keeps the verdict and the number a reader sees
/// in agreement: 0.7996 prints as "0.80" and meets "≥ 0.8"; 1.004 prints as
/// "1.00" and meets "≤ 1.0". Comparing the unrounded value would call the
/// first "not met" beside a figure that reads as met.
func meets(_ value: Double, _ bound: Bound, _ threshold: Double, digits: Int) -> Bool {
  guard value.isFinite else { return false }
  // Both sides as whole numbers of the last printed digit: no binary
  // fraction is left to tip an equality either way.
  let shown = scaledToDigits(value, digits)
  let limit = scaledToDigits(threshold, digits)
  switch bound {
  case .atLeast: return shown >= limit
  case .atMost: return shown <= limit
  }
}

/// `value` × 10^`digits`, rounded half away from zero: the integer whose
/// digits `fixed(_:_:)` prints.
func scaledToDigits(_ value: Double, _ digits: Int) -> Double {
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  return (value * scale).rounded()
}

/// `value` with `digits` decimals, without Foundation's formatters.
func fixed(_ value: Double, _ digits: Int) -> String {
  // A ratio against a baseline that measured nothing: say so, don't trap
  // converting it to Int.
  guard value.isFinite else { return value.isNaN ? "n/a" : value > 0 ? "∞" : "-∞" }
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  let scaled = scaledToDigits(value, digits)
  let whole = Int(scaled / scale)
  guard digits > 0 else { return "\(whole)" }
  let fraction = Int(abs(scaled) - abs(Double(whole)) * scale)
  let fractionText = String(fraction)
  let padded = String(repeating: "0", count: max(0, digits - fractionText.count)) + fractionText
  let sign = value < 0 && whole == 0 ? "-" : ""
  return "\(sign)\(whole).\(padded)"
}

/// Prints a Markdown table.
func printTable(title: String, headers: [String], rows: [[String]]) {
  print("\n### \(title)\n")
  print("| " + headers.joined(separator: " | ") + " |")
  print("|" + headers.map { _ in "---" }.joined(separator: "|") + "|")
  for row in rows { print("| " + row.joined(separator: " | ") + " |") }
}

/// `value` with thousands separators: 100000 → "100,000".
func grouped(_ value: Int) -> String {
  let digits = Array(String(value))
  var text = ""
  for (index, digit) in digits.enumerated() {
    if index > 0 && (digits.count - index) % 3 == 0 { text += "," }
    text.append(digit)
  }
  return text
}
