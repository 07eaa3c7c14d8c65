/// What the service's consumers show: the live summary line, drawn at
/// most once per `refresh` from the newest ``OrderSummary`` (one state's
/// figures), or in customers mode the progress line a ticker draws; and a
/// log line for each new largest order.
actor Dashboard {
  private let console: Console
  private let refresh: Duration?
  /// `nil` until a consumer put in its first value; formatted only when
  /// drawn.
  private var newest: Newest?

  private enum Newest {
    case summary(OrderSummary)
    case line(String)
  }
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
    newest = .summary(summary)
    drawIfDue()
  }

  /// Draws `line` now: its caller paces the lines.
  func draw(line: String) {
    newest = .line(line)
    lastDraw = nil
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
    guard let refresh, let newest else { return }
    // Real time, whatever clock paces the producers: this is for the eye.
    let now = ContinuousClock.now
    if let lastDraw, lastDraw.duration(to: now) < refresh { return }
    lastDraw = now
    let line =
      switch newest {
      case .summary(let summary): OrderService.summary(summary)
      case .line(let line): line
      }
    if console.isTerminal {
      liveLine = line
      console.write("\r\u{1B}[2K\(line)")
    } else {
      console.write("\(line)\n")
    }
  }
}
