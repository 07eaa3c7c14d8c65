/// What the service's consumers show: the live summary line, drawn at
/// most once per `refresh` from the newest ``OrderSummary`` (one state's
/// figures), and a log line for each new largest order.
actor Dashboard {
  private let console: Console
  private let refresh: Duration?
  /// `nil` until the summary's consumer put in its first value.
  private var summary: OrderSummary?
  /// Whether the largest order's consumer put in its first value, which is
  /// the state's (recovered from a journal, or none): not news.
  private var hasLargest = false
  private var lastDraw: ContinuousClock.Instant?
  /// The live line on a terminal, redrawn under lines logged above it.
  private var liveLine: String?

  init(console: Console, refresh: Duration?) {
    self.console = console
    self.refresh = refresh
  }

  func update(summary: OrderSummary) {
    self.summary = summary
    drawIfDue()
  }

  func update(largest: Order?) {
    if let largest, hasLargest {
      log("new largest order: \(Money.format(largest.cents)) (producer \(largest.producer), #\(largest.sequence))")
    }
    hasLargest = true
  }

  /// Writes `line` above the live line.
  func log(_ line: String) {
    if console.isTerminal {
      console.write("\r\u{1B}[2K\(line)\n\(liveLine ?? "")")
    } else {
      console.write("\(line)\n")
    }
  }

  /// Replaces the live line for good with `line`.
  func finish(_ line: String) {
    liveLine = nil
    console.write(console.isTerminal ? "\r\u{1B}[2K\(line)\n" : "\(line)\n")
  }

  private func drawIfDue() {
    guard let refresh, let summary else { return }
    // Real time, whatever clock paces the producers: this is for the eye.
    let now = ContinuousClock.now
    if let lastDraw, lastDraw.duration(to: now) < refresh { return }
    lastDraw = now
    let line = OrderService.summary(summary)
    if console.isTerminal {
      liveLine = line
      console.write("\r\u{1B}[2K\(line)")
    } else {
      console.write("\(line)\n")
    }
  }
}
