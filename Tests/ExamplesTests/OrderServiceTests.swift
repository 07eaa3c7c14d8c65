import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreOrderServiceExample
import AsyncCoreProcessTestSupport
import AsyncCoreTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite("OrderService example", .hangDetector)
struct OrderServiceTests {
  // MARK: - The logic

  @Test("the reducer counts, sums, keeps the largest order and checks each producer's order")
  func reducer() {
    var orders = Orders()
    let first = Order(producer: 0, sequence: 1, region: .europe, cents: 1_000)
    let larger = Order(producer: 1, sequence: 1, region: .asiaPacific, cents: 2_500)
    let skipped = Order(producer: 0, sequence: 3, region: .europe, cents: 2_500)
    for order in [first, larger, skipped] { Orders.reduce(&orders, .placed(order)) }
    #expect(orders.reduced == 3)
    #expect(orders.revenueCents == 6_000)
    #expect(orders.byRegion[.europe] == 2 && orders.byRegion[.americas] == 0 && orders.byRegion[.asiaPacific] == 1)
    #expect(orders.largest == larger)  // the first of equal amounts
    #expect(orders.lastSequence == [0: 3, 1: 1])
    #expect(orders.outOfOrder == 1)  // producer 0 went from 1 to 3
  }

  @Test("a producer's feed numbers its orders 1, 2, 3… and is the same on every run")
  func feed() {
    let orders = Array(OrderFeed(producer: 2).prefix(1_000))
    #expect(orders.map(\.sequence) == Array(1...1_000))
    #expect(orders.allSatisfy { $0.producer == 2 && (100...50_000).contains($0.cents) })
    #expect(Array(OrderFeed(producer: 2).prefix(1_000)) == orders)
    #expect(Array(OrderFeed(producer: 3).prefix(1_000)) != orders)
    #expect(Set(orders.map(\.region)) == Set(Region.allCases))
  }

  @Test("the summary line groups thousands and writes cents")
  func summaryLine() {
    var orders = Orders()
    orders.reduced = 1_234_567
    orders.revenueCents = 123_456_705
    orders.byRegion[.americas] = 1_000
    orders.largest = Order(producer: 0, sequence: 1, region: .europe, cents: 49_999)
    #expect(
      OrderService.summary(of: orders) == "1,234,567 orders · $1,234,567.05 · EU 0 AM 1,000 AP 0 · largest $499.99")
    #expect(OrderService.summary(of: Orders()) == "0 orders · $0.00 · EU 0 AM 0 AP 0 · largest -")
  }

  // MARK: - Runs

  @Test(
    "a run that ends on its own reduces exactly the orders the producers placed",
    arguments: [(1, 1_000), (4, 2_001), (16, 3_000), (8, 3)])
  func runsToTheEnd(producers: Int, total: Int) async throws {
    let collector = Collector()
    let service = OrderService(
      configuration: .init(producers: producers, interval: nil, totalOrders: total, refresh: nil),
      console: Console(isTerminal: false, write: collector.write))
    try await service.run()
    let report = try #require(service.report)
    let output = await collector.finish()

    #expect(report.accepted == total)
    #expect(report.reduced == total)
    // Each producer placed its share, 1, 2, 3… in order; the state adds up
    // to exactly those orders.
    let shares = (0..<producers).map { total / producers + ($0 < total % producers ? 1 : 0) }
    let placed = Self.orders(placedBy: shares)
    #expect(report.orders.lastSequence == Self.lastSequences(shares))
    #expect(report.orders.outOfOrder == 0)
    Self.expectTotals(of: report.orders, equalTo: placed)
    #expect(output.suffix(2) == ["\(OrderService.summary(of: report.orders))\n", "\(report.line)\n"])
    #expect(report.line == "reduced \(total) events (accepted \(total), lost 0)")
    #expect(service.core.hasShutDown)
  }

  @Test("every consumer's loop ends on the final state: the last live line is the final summary")
  func consumersEndOnTheFinalState() async throws {
    let collector = Collector()
    let service = OrderService(
      configuration: .init(producers: 4, interval: nil, totalOrders: 2_000, refresh: .zero),  // a line per update
      console: Console(isTerminal: false, write: collector.write))
    try await service.run()
    let report = try #require(service.report)
    let output = await collector.finish()
    let summary = "\(OrderService.summary(of: report.orders))\n"
    let live = output.dropLast(2).filter { !$0.hasPrefix("new largest order") }
    #expect(live.count > 1)
    #expect(live.first == "\(OrderService.summary(of: Orders()))\n")  // registered before the first order
    #expect(live.last == summary)
    #expect(output.suffix(2) == [summary, "\(report.line)\n"])
    #expect(service.core.metrics.observers == 0)
  }

  @Test("each live summary line shows one state: the revenue, regions and largest order of its order count")
  func liveLineShowsOneState() async throws {
    let clock = ManualClock()
    let (written, writer) = AsyncStream.makeStream(of: String.self)
    let service = OrderService(
      configuration: .init(producers: 1, interval: .seconds(1), totalOrders: nil, refresh: .zero),  // a line per update
      clock: clock, console: Console(isTerminal: false, write: { writer.yield($0) }))
    // One producer: after its first N orders the state is one, known in advance.
    var state = Orders()
    var lineAfter = [OrderService.summary(of: state)]
    for order in OrderFeed(producer: 0).prefix(20) {
      Orders.reduce(&state, .placed(order))
      lineAfter.append(OrderService.summary(of: state))
    }
    let running = Task { try await service.run() }
    var lines = written.makeAsyncIterator()
    var live: [String] = []
    for count in 1...5 {
      try await clock.waitForSleepers(atLeast: 1)  // order `count` is placed
      // Until a line shows it; each order is a new state for every figure.
      while let line = await lines.next() {
        if !line.hasPrefix("new largest order") { live.append(line) }
        if Self.leadingCount(line, before: " orders") == count { break }
      }
      await clock.advance(by: .seconds(1))
    }
    try await clock.waitForSleepers(atLeast: 1)
    running.cancel()
    try await running.value
    writer.finish()
    while let line = await lines.next() {
      if !line.hasPrefix("new largest order") { live.append(line) }
    }
    let report = try #require(service.report)
    #expect(report.reduced == 6)
    #expect(live.suffix(2) == ["\(lineAfter[6])\n", "\(report.line)\n"])
    for line in live.dropLast() {
      let count = try #require(Self.leadingCount(line, before: " orders"), "not a summary line: \(line)")
      #expect(line == "\(lineAfter[count])\n", "a line mixing two states: \(line)")
    }
  }

  @Test(
    "cancelling run() stops the producers and reduces every order the core accepted",
    arguments: [1, 8])
  func cancellation(producers: Int) async throws {
    let collector = Collector()
    let service = OrderService(
      configuration: .init(producers: producers, interval: nil, totalOrders: nil, refresh: nil),  // until cancelled
      console: Console(isTerminal: false, write: collector.write))
    let counts = await service.core.observe(\.reduced)
    let running = Task { try await service.run() }
    for await count in counts where count >= 2_000 { break }  // the producers are busy
    running.cancel()
    try await running.value
    let report = try #require(service.report)

    #expect(report.reduced >= 2_000)
    #expect(report.accepted == report.reduced)
    // Exactly the first orders of each producer's feed, none missing.
    let shares = (0..<producers).map { report.orders.lastSequence[$0] ?? 0 }
    #expect(shares.reduce(0, +) == report.reduced)
    #expect(report.orders.outOfOrder == 0)
    Self.expectTotals(of: report.orders, equalTo: Self.orders(placedBy: shares))
    // Stopped: nothing more is accepted.
    #expect(service.core.send(.placed(Order(producer: 0, sequence: 1, region: .europe, cents: 100))) == .shutDown)
    #expect(await service.core.state == report.orders)
    #expect(await collector.finish().last == "\(report.line)\n")
  }

  @Test("when the core shuts down under them, producers stop at the first refused order, which is not counted")
  func coreShutDownUnderTheProducers() async throws {
    let service = OrderService(
      configuration: .init(producers: 4, interval: nil, totalOrders: nil, refresh: nil),
      console: Console(isTerminal: false, write: { _ in }))
    let counts = await service.core.observe(\.reduced)
    try await withThrowingDiscardingTaskGroup { group in
      group.addTask { try await service.run() }
      for await count in counts where count >= 1_000 { break }
      await service.core.shutdown()  // not a cancellation: each producer learns it from `send`
    }
    let report = try #require(service.report)
    #expect(report.reduced >= 1_000)
    #expect(report.accepted == report.reduced)
    #expect(report.orders.outOfOrder == 0)
  }

  @Test("producers pace themselves on the clock: one order each per interval")
  func pacing() async throws {
    let clock = ManualClock()
    let service = OrderService(
      configuration: .init(producers: 3, interval: .seconds(1), totalOrders: nil, refresh: nil),
      clock: clock, console: Console(isTerminal: false, write: { _ in }))
    let running = Task { try await service.run() }
    for round in 1...4 {
      try await clock.waitForSleepers(atLeast: 3)  // each has placed its order and sleeps
      #expect(await service.core.state.reduced == 3 * round)
      await clock.advance(by: .seconds(1))
    }
    try await clock.waitForSleepers(atLeast: 3)
    // Cancelling wakes the sleeping producers; the orders they placed are kept.
    running.cancel()
    try await running.value
    let report = try #require(service.report)
    #expect(report.reduced == 15 && report.accepted == 15)
    #expect(report.orders.lastSequence == [0: 5, 1: 5, 2: 5])
  }

  @Test("a service runs once")
  func runsOnce() async throws {
    let service = OrderService(
      configuration: .init(producers: 2, interval: nil, totalOrders: 0, refresh: nil),
      console: Console(isTerminal: false, write: { _ in }))
    try await service.run()
    #expect(service.report?.reduced == 0)
    await #expect(throws: CoreError.alreadyRunning) { try await service.run() }
  }

  // MARK: - The program

  @Test("`swift run OrderService --events 3000` stops on its own and reports every order")
  func programEndsOnItsOwn() async throws {
    let program = try ExampleProgram.start(
      "OrderService", arguments: ["--events", "3000", "--producers", "3", "--rate", "5000"])
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(lines.first?.hasPrefix("OrderService: 3 producers at 5000 orders/s each") == true)
    #expect(lines.dropLast().last?.hasPrefix("3,000 orders · $") == true)
    #expect(lines.last == "reduced 3000 events (accepted 3000, lost 0)")
    #expect(await program.exitStatus() == .exited(0))
  }

  @Test(
    "an option value out of its range stops the program before it runs, with its message and status 2",
    arguments: [
      ("--duration", "1e300", "31536000"), ("--refresh", "1e300", "3600"), ("--rate", "1e-300", "1000000"),
      ("--rate", "1e308", "1000000"), ("--duration", "0", "31536000"), ("--refresh", "nan", "3600"),
    ])
  func programRejectsOutOfRangeOptions(option: String, value: String, limit: String) async throws {
    let program = try ExampleProgram.start("OrderService", arguments: [option, value])
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(lines.first == "OrderService: \(option) takes a number from 0.001 to \(limit), not \"\(value)\"")
    #expect(lines.dropFirst().first == "usage: OrderService [options]")
    #expect(await program.exitStatus() == .exited(2))
  }

  @Test(
    "an unknown option or a stray argument is named as such, whatever follows it; an option without its value says so",
    arguments: [
      (["--bogus"], "unknown option --bogus"), (["--bogus", "5"], "unknown option --bogus"),
      (["-x", "--events", "5"], "unknown option -x"),
      (["--events", "5", "extra"], "unexpected argument extra: OrderService takes options only"),
      (["extra", "--events", "5"], "unexpected argument extra: OrderService takes options only"),
      (["--events"], "--events needs a value"),
      (["--journal", ""], "--journal takes a directory, not an empty path"),
    ])
  func programNamesWhatItRefuses(arguments: [String], problem: String) async throws {
    let program = try ExampleProgram.start("OrderService", arguments: arguments)
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(lines.first == "OrderService: \(problem)")
    #expect(lines.dropFirst().first == "usage: OrderService [options]")
    #expect(await program.exitStatus() == .exited(2))
  }

  @Test("Ctrl-C: the program stops taking orders, reduces every accepted one, says how many, and exits 0")
  func programStopsOnInterrupt() async throws {
    let program = try ExampleProgram.start("OrderService", arguments: ["--producers", "4", "--refresh", "0.01"])
    defer { program.terminate() }
    var lines = program.output.makeAsyncIterator()
    var seen: [String] = []
    // Its first line comes once it handles SIGINT; then wait for orders.
    var ordersBefore = 0
    while ordersBefore < 500, let line = await lines.next() {
      seen.append(line)
      if let count = Self.leadingCount(line, before: " orders") { ordersBefore = count }
    }
    try #require(ordersBefore >= 500, "the program ended or stalled before it reduced orders: \(seen)")
    program.interrupt()
    var rest: [String] = []
    while let line = await lines.next() { rest.append(line) }
    // Its output after Ctrl-C, standard error's included, is in the
    // failure: a sanitizer's report is its last lines.
    #expect(await program.exitStatus() == .exited(0), "after Ctrl-C it wrote: \(rest.suffix(60))")

    #expect(rest.contains("interrupted: no new orders; reducing the accepted ones"))
    let last = try #require(rest.last)
    let words = last.split(separator: " ")
    // reduced N events (accepted N, lost 0)
    try #require(words.count == 7, "unexpected last line: \(last)")
    #expect(words[0] == "reduced" && words[2] == "events" && words[3] == "(accepted")
    let reduced = try #require(Int(words[1]))
    #expect(reduced >= ordersBefore)
    #expect(words[4] == "\(reduced),")
    #expect(words[5...] == ["lost", "0)"])
    #expect(rest.dropLast().last.flatMap { Self.leadingCount($0, before: " orders") } == reduced)
  }

  @Test("an option's value is quoted escaped and bounded in the refusal, an unknown option too")
  func programEscapesOptions() async throws {
    let program = try ExampleProgram.start("OrderService", arguments: ["--rate", "\u{1B}[2J"])
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(lines.first == "OrderService: --rate takes a number from 0.001 to 1000000, not \"\\u{1B}[2J\"")
    #expect(await program.exitStatus() == .exited(2))

    // 100 KB: Linux refuses a single argument over 128 KB (E2BIG).
    let long = "--" + String(repeating: "x", count: 100_000)
    let unknown = try ExampleProgram.start("OrderService", arguments: [long, "1"])
    defer { unknown.terminate() }
    let unknownLines = await unknown.allLines()
    expectSafeToShow(unknownLines)
    #expect(unknownLines.first == "OrderService: unknown option \(long.prefix(EchoLimit.input))…")
    #expect(await unknown.exitStatus() == .exited(2))
  }

  @Test(
    "--journal: killed with SIGKILL mid-stream, a restart on the same journal resumes exactly the acknowledged orders")
  func programResumesFromItsJournal() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let journal = scratch.path + "/journal"
    let producers = 3

    // The first run prints `ack P S` once producer P's order S is on disk
    // (its dispatch returned, under the journal's every-action policy).
    let first = try ExampleProgram.start(
      "OrderService",
      arguments: ["--journal", journal, "--acks", "--producers", "\(producers)", "--rate", "5000", "--refresh", "3600"])
    defer { first.terminate() }
    var acknowledged = [Int](repeating: 0, count: producers)
    var acknowledgements = 0
    var seen: [String] = []
    func count(_ line: String) {
      seen.append(line)
      guard let (producer, sequence) = Self.acknowledgement(line), producer < producers else { return }
      #expect(sequence == acknowledged[producer] + 1, "producer \(producer)'s orders come in order")
      acknowledged[producer] = sequence
      acknowledgements += 1
    }
    var lines = first.output.makeAsyncIterator()
    while acknowledgements < 300, let line = await lines.next() { count(line) }
    try #require(acknowledgements >= 300, "the program ended or stalled before it placed orders: \(seen.prefix(8))")
    first.terminate()  // SIGKILL, mid-stream
    while let line = await lines.next() { count(line) }  // what it printed before it died
    #expect(await first.exitStatus() == .signaled(SIGKILL))

    // The second run resumes, places 30 more orders (10 a producer) and ends.
    let second = try ExampleProgram.start(
      "OrderService",
      arguments: ["--journal", journal, "--producers", "\(producers)", "--events", "30", "--rate", "5000"])
    defer { second.terminate() }
    let output = await second.allLines()
    #expect(await second.exitStatus() == .exited(0), "\(output.suffix(5))")
    let resumed = try #require(output.first { $0.hasPrefix("resumed ") }, "\(output.prefix(5))")
    let through = Self.resumedThrough(resumed, producers: producers)
    // Every acknowledged order, and at most the one each producer had in
    // flight when it was killed (dispatched, not yet acknowledged).
    for producer in 0..<producers {
      #expect(
        (acknowledged[producer]...acknowledged[producer] + 1).contains(through[producer]),
        "producer \(producer): acknowledged through #\(acknowledged[producer]), resumed through #\(through[producer])")
    }
    let recovered = through.reduce(0, +)
    #expect(resumed.hasPrefix("resumed \(recovered) orders from the journal: "))
    // The totals are those of exactly each producer's orders 1…through + 10:
    // none lost, none placed twice.
    var expected = Orders()
    for order in Self.orders(placedBy: through.map { $0 + 10 }) { Orders.reduce(&expected, .placed(order)) }
    #expect(output.last == "reduced \(recovered + 30) events (recovered \(recovered), accepted 30, lost 0)")
    #expect(output.dropLast().last == OrderService.summary(of: expected))
    // Each summary line is drawn from the whole recovered state, never from
    // the first consumer's part of it beside the others' zeros.
    let halfDrawn = output.filter { $0.contains(" orders · $0.00 ") }
    #expect(halfDrawn.isEmpty, "\(halfDrawn)")
    // The recovered largest order is the state's, not news.
    var recoveredOrders = Orders()
    for order in Self.orders(placedBy: through) { Orders.reduce(&recoveredOrders, .placed(order)) }
    let largest = try #require(recoveredOrders.largest)
    let announced = output.filter {
      $0.hasPrefix("new largest order: ") && $0.hasSuffix("(producer \(largest.producer), #\(largest.sequence))")
    }
    #expect(announced.isEmpty, "\(announced)")
  }

  // MARK: - Helpers

  /// `(2, 17)` in `ack 2 17`.
  static func acknowledgement(_ line: String) -> (producer: Int, sequence: Int)? {
    let words = line.split(separator: " ")
    guard words.count == 3, words[0] == "ack", let producer = Int(words[1]), let sequence = Int(words[2]) else {
      return nil
    }
    return (producer, sequence)
  }

  /// `[12, 15, 0]` in `resumed 27 orders from the journal: producer 0 through #12, producer 1 through #15`.
  static func resumedThrough(_ line: String, producers: Int) -> [Int] {
    var through = [Int](repeating: 0, count: producers)
    guard let colon = line.firstIndex(of: ":") else { return through }
    for part in line[line.index(after: colon)...].split(separator: ",") {
      let words = part.split(separator: " ")
      guard words.count == 4, words[0] == "producer", let producer = Int(words[1]), producer < producers,
        words[2] == "through", words[3].hasPrefix("#"), let sequence = Int(words[3].dropFirst())
      else { continue }
      through[producer] = sequence
    }
    return through
  }

  /// The orders producers 0, 1, 2… place when each places its share.
  static func orders(placedBy shares: [Int]) -> [Order] {
    shares.enumerated().flatMap { producer, share in OrderFeed(producer: producer).prefix(share) }
  }

  static func lastSequences(_ shares: [Int]) -> [Int: Int] {
    var last: [Int: Int] = [:]
    for (producer, share) in shares.enumerated() where share > 0 { last[producer] = share }
    return last
  }

  /// What reducing `placed` in any interleaving gives.
  static func expectTotals(
    of orders: Orders, equalTo placed: [Order], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(orders.reduced == placed.count, sourceLocation: sourceLocation)
    #expect(orders.revenueCents == placed.reduce(0) { $0 + $1.cents }, sourceLocation: sourceLocation)
    for region in Region.allCases {
      #expect(
        orders.byRegion[region] == placed.count(where: { $0.region == region }), sourceLocation: sourceLocation)
    }
    #expect(orders.largest?.cents == placed.map(\.cents).max(), sourceLocation: sourceLocation)
  }

  /// `1,234` in `"1,234 orders · …"`.
  static func leadingCount(_ line: String, before marker: String) -> Int? {
    guard let end = line.firstRange(of: marker) else { return nil }
    return Int(line[..<end.lowerBound].filter { $0 != "," })
  }
}

/// A fresh directory under /tmp, removed with the files in it (and in its
/// subdirectories, one level down: a journal's) at ``remove()``.
struct TemporaryDirectory {
  let path: String

  init() throws {
    var template = Array("/tmp/order-service-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw SpawnFailure(description: "mkdtemp failed: errno \(errno)") }
    path = String(cString: made)
  }

  func remove() {
    for name in Self.names(in: path) {
      let child = path + "/" + name
      for file in Self.names(in: child) { unlink(child + "/" + file) }
      if rmdir(child) != 0 { unlink(child) }
    }
    rmdir(path)
  }

  private static func names(in directory: String) -> [String] {
    guard let stream = opendir(directory) else { return [] }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}
