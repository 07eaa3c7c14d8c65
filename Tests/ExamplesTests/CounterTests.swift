import AsyncCore
import AsyncCoreCounterExample
import AsyncCoreExampleSupport
import AsyncCoreTesting
import Testing

@Suite("Counter example", .hangDetector)
struct CounterTests {
  @Test("a step change moves the count by the new step from then on, and never moves it itself")
  func stepChangesWhileRunning() async {
    let store = TestCore(initialState: Counter(), reducer: Reduce(Counter.reduce))
    await store.send(.increment) { $0.count = 1 }
    await store.send(.setStep(5)) { $0.step = 5 }
    await store.send(.increment) { $0.count = 6 }
    await store.send(.decrement) { $0.count = 1 }
    await store.send(.reset) { $0.count = 0 }
    await store.send(.increment) { $0.count = 5 }
    await store.finish()
  }

  @Test("commands are read from a line, several per line")
  func parsing() throws {
    #expect(
      try CounterCommand.parse(" +  - step 5\treset q")
        == [.send(.increment), .send(.decrement), .send(.setStep(5)), .send(.reset), .quit])
    #expect(try CounterCommand.parse("") == [])
    #expect(try CounterCommand.parse("quit") == [.quit])
  }

  @Test(
    "a line with a mistake is refused whole, saying what is wrong",
    arguments: [
      ("+ x", CounterCommandError.unknown("x")),
      ("+ step", .missingStep),
      ("step 0", .invalidStep("0")),
      ("step 1001", .invalidStep("1001")),
      ("step five", .invalidStep("five")),
    ])
  func parsingErrors(line: String, error: CounterCommandError) {
    #expect(throws: error) { try CounterCommand.parse(line) }
  }

  @Test("commands print as they are typed")
  func commandText() throws {
    let line = "+ - step 7 reset q"
    #expect(try CounterCommand.parse(line).map(\.text).joined(separator: " ") == line)
  }

  /// What the session writes for `+ + step 5 + - q`: the subscriber on
  /// each count, the `for await` loop on each state, in this order.
  static let transcript = [
    "subscriber  count 0",
    "for await   count 0, step 1",
    "> +",
    "subscriber  count 1",
    "for await   count 1, step 1",
    "> +",
    "subscriber  count 2",
    "for await   count 2, step 1",
    "> step 5",
    "for await   count 2, step 5",  // the count did not change: no subscriber call
    "> +",
    "subscriber  count 7",
    "for await   count 7, step 5",
    "> -",
    "subscriber  count 2",
    "for await   count 2, step 5",
    "> q",
    "bye: count 2, step 5",
  ]

  @Test("the session shows both observers, in order, and shuts the core down")
  func session() async {
    let collector = Collector()
    let core = Core(initialState: Counter(), reducer: Reduce(Counter.reduce))
    let final = await CounterSession(core: core, write: collector.write)
      .run(lines: Self.lines(["+", "+ step 5", "+ - q", "+"]), echo: true)
    #expect(await collector.finish() == Self.transcript)
    #expect(final == Counter(count: 2, step: 5))
    #expect(core.hasShutDown)
    #expect(core.metrics.observers == 0)  // the loop ended with the session
  }

  @Test("a mistyped line is reported and the session goes on; the end of input ends it")
  func mistakesAndEndOfInput() async {
    let collector = Collector()
    let core = Core(initialState: Counter(), reducer: Reduce(Counter.reduce))
    let final = await CounterSession(core: core, write: collector.write)
      .run(lines: Self.lines(["step 3 +", "+ jump", "+"]), echo: false)
    #expect(
      await collector.finish() == [
        "subscriber  count 0",
        "for await   count 0, step 1",
        "for await   count 0, step 3",
        "subscriber  count 3",
        "for await   count 3, step 3",
        "? unknown command \"jump\" (\(CounterCommand.help))",
        "subscriber  count 6",
        "for await   count 6, step 3",
        "bye: count 6, step 3",
      ])
    #expect(final == Counter(count: 6, step: 3))
  }

  @Test("`swift run Counter + + step 5 + - q` prints the session's transcript and exits 0")
  func programWithArguments() async throws {
    let program = try ExampleProgram.start("Counter", arguments: ["+", "+", "step", "5", "+", "-", "q"])
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(lines == [Self.header] + Self.transcript)
    #expect(await program.exitStatus() == .exited(0))
  }

  @Test("the program reads commands from standard input when given none")
  func programReadingStandardInput() async throws {
    let program = try ExampleProgram.start("Counter", input: "+\n+ step 5\n+ - q\n+\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(lines == [Self.header] + Self.transcript)
    #expect(await program.exitStatus() == .exited(0))
  }

  @Test("a mistake on the command line stops the program before it runs, with status 2")
  func programRejectsBadArguments() async throws {
    let program = try ExampleProgram.start("Counter", arguments: ["+", "step", "0"])
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(lines == ["Counter: \(CounterCommandError.invalidStep("0"))"])
    #expect(await program.exitStatus() == .exited(2))
  }

  @Test("a mistyped word is quoted escaped and bounded, given on the command line or typed")
  func programEscapesMistypedWords() async throws {
    let refused = try ExampleProgram.start("Counter", arguments: ["+", "\u{1B}[2J"])
    defer { refused.terminate() }
    #expect(await refused.allLines() == ["Counter: unknown command \"\\u{1B}[2J\" (\(CounterCommand.help))"])
    #expect(await refused.exitStatus() == .exited(2))

    let long = String(repeating: "x", count: 200_000)
    let program = try ExampleProgram.start("Counter", input: "+ \u{9B}31m\u{7}\n\(long)\nq\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    expectSafeToShow(lines)
    #expect(lines.contains("? unknown command \"\\u{9B}31m\\u{7}\" (\(CounterCommand.help))"))
    #expect(lines.contains("? unknown command \"\(long.prefix(EchoLimit.input))…\" (\(CounterCommand.help))"))
  }

  @Test("Ctrl-C once the first screen is drawn ends the session as q does: the bye line, status 0")
  func programSaysByeOnInterrupt() async throws {
    let program = try ExampleProgram.start("Counter", input: "+ step 5\n", keepingInputOpen: true)
    defer { program.terminate() }
    var lines = program.output.makeAsyncIterator()
    var seen: [String] = []
    while let line = await lines.next() {
      seen.append(line)
      if line == "for await   count 1, step 5" { break }
    }
    try #require(seen.last == "for await   count 1, step 5", "the program ended before its screen: \(seen)")
    program.interrupt()
    var rest: [String] = []
    while let line = await lines.next() { rest.append(line) }
    let status = await program.exitStatus()
    #expect(status == .exited(0))
    #expect(rest == ["bye: count 1, step 5"])
  }

  static let header = "Counter (Unicore's example): \(CounterCommand.help)"

  static func lines(_ lines: [String]) -> AsyncStream<String> {
    AsyncStream { continuation in
      for line in lines { continuation.yield(line) }
      continuation.finish()
    }
  }
}
