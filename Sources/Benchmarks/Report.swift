#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Everything one run measured: tables to print and write, the targets of
/// ../shared/PERFORMANCE.md judged against the figures, and the raw figures.
final class Report {
  struct Table {
    let title: String
    let headers: [String]
    var rows: [[String]]
    var notes: [String] = []
  }

  struct Target {
    let figure: String
    let requirement: String
    let measured: String
    let met: Bool
    /// Why a target is not met, from what the profile showed.
    let why: String
  }

  struct Figure {
    let family: String
    let name: String
    let unit: String
    let median: Double
    let min: Double
    let max: Double
  }

  var tables: [Table] = []
  var targets: [Target] = []
  var figures: [Figure] = []

  func add(_ table: Table) {
    tables.append(table)
    printTable(title: table.title, headers: table.headers, rows: table.rows)
    for note in table.notes { print("\n\(note)") }
  }

  /// Records a target: `ratio` against `threshold`, met when at least
  /// (or, with `atMost`, at most) the threshold.
  func judge(
    _ figure: String, requirement: String, ratio: Double, threshold: Double, atMost: Bool = false,
    measured: String? = nil, why: String
  ) {
    let met = ratio.isFinite && (atMost ? ratio <= threshold : ratio >= threshold)
    targets.append(
      Target(
        figure: figure, requirement: requirement, measured: measured ?? "\(fixed(ratio, 2))×", met: met,
        why: met ? "" : why))
  }

  func record(_ family: String, _ results: [ThroughputResult], unit: String = "per second") {
    for result in results {
      figures.append(
        Figure(family: family, name: result.name, unit: unit, median: result.median, min: result.min, max: result.max))
    }
  }

  func printTargets() {
    printTable(
      title: "Targets (../shared/PERFORMANCE.md)", headers: ["figure", "target", "measured", "met"],
      rows: targets.map { [$0.figure, $0.requirement, $0.measured, $0.met ? "met" : "**not met**"] })
  }

  // MARK: - Writing

  func markdown(machine: Machine, options: Options, duration: Double) -> String {
    var text = """
      # AsyncCore benchmarks

      Written by `swift run -c release AsyncCoreBenchmarks` on \(machine.date); do not edit by hand.
      Regenerate with the same command (about \(Int(duration.rounded())) s); `--quick` for a smoke run.

      - Machine: \(machine.cpu), \(machine.cores) cores, \(machine.memory), \(machine.kernel)
      - Toolchain: \(machine.toolchain)
      - Rounds: \(options.rounds) interleaved rounds per figure; median (min – max)

      """
    let met = targets.filter(\.met).count
    text += "\n## Targets: \(met) of \(targets.count) met\n\n"
    text += markdownTable(
      headers: ["figure", "target", "measured", "met"],
      rows: targets.map { [$0.figure, $0.requirement, $0.measured, $0.met ? "met" : "**not met**"] })
    let missed = targets.filter { !$0.met }
    if !missed.isEmpty {
      text += "\n### Why the missed targets are missed\n\n"
      // One entry per reason: several figures (fan-out at each N) share one.
      var reasons: [String] = []
      var figuresByReason: [String: [String]] = [:]
      for target in missed {
        if figuresByReason[target.why] == nil { reasons.append(target.why) }
        figuresByReason[target.why, default: []].append("**\(target.figure)** (\(target.measured))")
      }
      for reason in reasons {
        text += "- \(figuresByReason[reason, default: []].joined(separator: "; ")): \(reason)\n"
      }
    }
    for table in tables {
      text += "\n## \(table.title)\n\n" + markdownTable(headers: table.headers, rows: table.rows)
      for note in table.notes { text += "\n\(note)\n" }
    }
    text += "\n## Method\n\n" + Self.method + "\n"
    return text
  }

  static let method = """
    Every figure is measured in this one process, beside the baselines it is judged \
    against, so the ratios hold even though absolute numbers move ±20% between runs \
    (up to 2× for anything that wakes many tasks). Throughput benchmarks run each \
    contender once per round, in an order that rotates between rounds, and report the \
    median, minimum and maximum over rounds. Every measurement runs on a detached task, \
    never on the main actor, whose hops cost tens of times more. A throughput figure is \
    the number of actions divided by the time from the first action until the state, and \
    every observer, holds the result of the last one; contenders that wake a task per \
    action run fewer actions, since only the rate is compared. Fan-out latency is the time \
    from one `dispatch` until the first and the last of N observers, each consuming in \
    its own task, holds the new state, over many rounds; p999 over fewer than 1,000 \
    rounds is the maximum. Memory is the growth of resident memory (/proc/self/statm) \
    while 100,000 registrations or idle cores are held, divided by their number. The \
    baselines are a raw reducer loop, a Mutex-guarded store with synchronous callbacks, \
    a plain actor (with one AsyncStream per observer), and a shared latest-value cell \
    whose parked continuations are resumed directly (../shared/PERFORMANCE.md).
    """

  func json(machine: Machine) -> String {
    func quoted(_ text: String) -> String {
      var escaped = ""
      for character in text {
        switch character {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        default: escaped.append(character)
        }
      }
      return "\"\(escaped)\""
    }
    let figureLines = figures.map { figure in
      "    {\"family\": \(quoted(figure.family)), \"name\": \(quoted(figure.name)), \"unit\": \(quoted(figure.unit)), "
        + "\"median\": \(figure.median), \"min\": \(figure.min), \"max\": \(figure.max)}"
    }
    let targetLines = targets.map { target in
      "    {\"figure\": \(quoted(target.figure)), \"target\": \(quoted(target.requirement)), "
        + "\"measured\": \(quoted(target.measured)), \"met\": \(target.met)}"
    }
    return """
      {
        "date": \(quoted(machine.date)),
        "machine": \(quoted("\(machine.cpu), \(machine.cores) cores, \(machine.memory)")),
        "toolchain": \(quoted(machine.toolchain)),
        "figures": [
      \(figureLines.joined(separator: ",\n"))
        ],
        "targets": [
      \(targetLines.joined(separator: ",\n"))
        ]
      }

      """
  }
}

func markdownTable(headers: [String], rows: [[String]]) -> String {
  var text = "| " + headers.joined(separator: " | ") + " |\n"
  text += "|" + headers.map { _ in "---" }.joined(separator: "|") + "|\n"
  for row in rows { text += "| " + row.joined(separator: " | ") + " |\n" }
  return text
}

/// Writes `text` to `path`, or says why it could not.
func write(_ text: String, to path: String) {
  guard let file = fopen(path, "w") else {
    print("Could not write \(path)")
    return
  }
  fputs(text, file)
  fclose(file)
  print("Wrote \(path)")
}
