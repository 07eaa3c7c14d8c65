/// What the service's consumers show: each consumer puts in what its
/// selector gives, and the dashboard draws the live summary line from all
/// of them, at most once per `refresh`.
actor Dashboard {
  private let console: Console
  private let refresh: Duration?
  private var orders = 0
  private var revenueCents = 0
  private var regions = RegionCounts()
  private var largest: Order?
  /// The parts not yet reported: the line is drawn once each consumer has
  /// put in its first value, never half of a state recovered from a journal.
  private var missing: Set<String> = ["orders", "revenue", "regions", "largest"]
  private var lastDraw: ContinuousClock.Instant?
  /// The live line on a terminal, redrawn under lines logged above it.
  private var liveLine: String?

  init(console: Console, refresh: Duration?) {
    self.console = console
    self.refresh = refresh
  }

  func update(orders: Int) {
    self.orders = orders
    drawIfDue(after: "orders")
  }

  func update(revenueCents: Int) {
    self.revenueCents = revenueCents
    drawIfDue(after: "revenue")
  }

  func update(regions: RegionCounts) {
    self.regions = regions
    drawIfDue(after: "regions")
  }

  func update(largest: Order?) {
    self.largest = largest
    // The first value is the state's (recovered from a journal, or none):
    // not news.
    if let largest, !missing.contains("largest") {
      log("new largest order: \(Money.format(largest.cents)) (producer \(largest.producer), #\(largest.sequence))")
    }
    drawIfDue(after: "largest")
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

  private func drawIfDue(after part: String) {
    missing.remove(part)
    guard let refresh, missing.isEmpty else { return }
    // Real time, whatever clock paces the producers: this is for the eye.
    let now = ContinuousClock.now
    if let lastDraw, lastDraw.duration(to: now) < refresh { return }
    lastDraw = now
    let line = OrderService.summary(orders: orders, revenueCents: revenueCents, regions: regions, largest: largest)
    if console.isTerminal {
      liveLine = line
      console.write("\r\u{1B}[2K\(line)")
    } else {
      console.write("\(line)\n")
    }
  }
}
