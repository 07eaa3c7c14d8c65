#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Everything one run measured: tables to print and write, the project's
/// performance targets judged against the figures, and the raw figures.
final class Report {
  struct Table {
    let title: String
    let headers: [String]
    var rows: [[String]]
    var notes: [String] = []
  }

  struct Target {
    enum Verdict {
      case met
      case notMet
      /// The benchmark has nothing to measure yet (the API does not exist).
      case notMeasured
    }

    let figure: String
    let requirement: String
    let measured: String
    let verdict: Verdict
    /// Why a target is not met (from what the profile showed), or why it is
    /// not measured.
    let why: String

    var verdictText: String {
      switch verdict {
      case .met: "met"
      case .notMet: "**not met**"
      case .notMeasured: "not measured"
      }
    }
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

  /// Records a target: `value` against `threshold`, judged on the figure as
  /// printed (rounded to `digits` decimals), so that the verdict always
  /// agrees with the number a reader sees.
  ///
  /// The measured column reads `value` with `digits` decimals and `unit`
  /// ("×" for a ratio, " B" for bytes), then `detail` in parentheses.
  func judge(
    _ figure: String, requirement: String, value: Double, _ bound: Bound, _ threshold: Double, digits: Int = 2,
    unit: String = "×", detail: String? = nil, why: String
  ) {
    let met = meets(value, bound, threshold, digits: digits)
    let measured = value.isFinite ? fixed(value, digits) + unit + (detail.map { " (\($0))" } ?? "") : "no figure"
    targets.append(
      Target(
        figure: figure, requirement: requirement, measured: measured, verdict: met ? .met : .notMet,
        why: met ? "" : why))
  }

  /// Records a target of the brief that this benchmark cannot measure yet.
  func notMeasured(_ figure: String, requirement: String, why: String) {
    targets.append(Target(figure: figure, requirement: requirement, measured: "—", verdict: .notMeasured, why: why))
  }

  func record(_ family: String, _ results: [ThroughputResult], unit: String = "per second") {
    for result in results {
      figures.append(
        Figure(family: family, name: result.name, unit: unit, median: result.median, min: result.min, max: result.max))
    }
  }

  func printTargets() {
    printTable(
      title: "Targets: \(summary)", headers: ["figure", "target", "measured", "verdict"],
      rows: targets.map { [$0.figure, $0.requirement, $0.measured, $0.verdictText] })
  }

  /// "12 of 22 met", and how many the benchmark cannot measure yet.
  var summary: String {
    let judged = targets.filter { $0.verdict != .notMeasured }
    let unmeasured = targets.count - judged.count
    return "\(judged.filter { $0.verdict == .met }.count) of \(judged.count) met"
      + (unmeasured > 0 ? ", \(unmeasured) not measured" : "")
  }

  // MARK: - Writing

  /// The command that writes the report, as the report and README cite it.
  static let command = "swift run -c release AsyncCoreBenchmarks"

  func markdown(machine: Machine, options: Options, duration: Double) -> String {
    var text = """
      # AsyncCore benchmarks

      Written by `\(Self.command)` on \(machine.date); do not edit by hand.
      Regenerate with the same command (this run took \(Int(duration.rounded())) s); `--quick` for a smoke run.

      - Machine: \(machine.cpu), \(machine.cores) cores, \(machine.memory), \(machine.kernel)
      - Toolchain: \(machine.toolchain)
      - Rounds: \(options.rounds) interleaved rounds per figure; median (min – max)

      `--quick` (what CI runs) takes 3 rounds of a tenth of the actions and 30 fan-out rounds per N. From noise \
      alone it can show as not met: fan-out at N = 1 (a p50 of 1–4 µs, where one scheduler delay moves p99 \
      tenfold), `send` against the Mutex store (within ±0.1 of its threshold), and the ratios of dispatch with \
      observers and of subscribers (they swing ±30% between quick runs). Judge targets on a full run only.

      ## Targets

      \(Brief.targets)

      The baselines the targets name are described under [Baselines](#baselines-what-each-stands-for). \
      This report is the one place the figures live: README.md links here and quotes none of them.

      """
    text += "\n**Targets: \(summary)** (`\(Self.command)`, \(machine.date), \(machine.cores) cores, "
    text += "\(machine.toolchain))\n\n"
    text += markdownTable(
      headers: ["figure", "target", "measured", "verdict"],
      rows: targets.map { [$0.figure, $0.requirement, $0.measured, $0.verdictText] })
    text += reasons(for: .notMet, title: "Why the missed targets are missed")
    text += reasons(for: .notMeasured, title: "Why some targets are not measured")
    text += "\n## Baselines: what each stands for\n\n"
    for baseline in Brief.baselines {
      text += "- **\(baseline.name)**: \(baseline.standsFor)\n"
    }
    for table in tables {
      text += "\n## \(table.title)\n\n" + markdownTable(headers: table.headers, rows: table.rows)
      for note in table.notes { text += "\n\(note)\n" }
    }
    text += "\n## Method\n\n" + Brief.workload + " " + Self.method + "\n"
    return text
  }

  /// One entry per reason: several figures (fan-out at each N) share one.
  private func reasons(for verdict: Target.Verdict, title: String) -> String {
    let selected = targets.filter { $0.verdict == verdict }
    guard !selected.isEmpty else { return "" }
    var reasons: [String] = []
    var figuresByReason: [String: [String]] = [:]
    for target in selected {
      if figuresByReason[target.why] == nil { reasons.append(target.why) }
      let measured = verdict == .notMeasured ? "" : " at \(target.measured)"
      figuresByReason[target.why, default: []].append("**\(target.figure)**\(measured)")
    }
    var text = "\n### \(title)\n\n"
    for reason in reasons {
      text += "- \(figuresByReason[reason, default: []].joined(separator: "; ")): \(reason)\n"
    }
    return text
  }

  static let method = """
    Every figure is measured in this one process, beside the baselines it is judged \
    against, so the ratios hold even though absolute numbers move between runs. \
    Throughput benchmarks run each \
    contender once per round, in an order that rotates between rounds, and report the \
    median, minimum and maximum over rounds. Every measurement runs on a detached task, \
    never on the main actor, whose hops cost tens of times more. A throughput figure is \
    the number of actions divided by the time from the first action until the state, and \
    every observer, holds the result of the last one; contenders that wake a task per \
    action run fewer actions, since only the rate is compared. Fan-out latency is the time \
    from one `dispatch` until the first and the last of N observers, each consuming in \
    its own task, holds the new state, over many rounds; p999 over fewer than 1,000 \
    rounds is the maximum. Memory is the growth of resident memory (/proc/self/statm) \
    while 100,000 registrations or idle cores are held, divided by their number.
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
        + "\"measured\": \(quoted(target.measured)), \"met\": \(target.verdict == .met), "
        + "\"verdict\": \(quoted(target.verdictText.replacing("*", with: "")))}"
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
