import AsyncCoreExampleSupport
import Synchronization
import Testing

@Suite("What the examples share", .hangDetector)
struct ExampleSupportTests {
  // MARK: - Escaping what is echoed

  @Test(
    "control and invisible characters are written as escapes",
    arguments: [
      ("Leeds\u{1B}[2J", "Leeds\\u{1B}[2J"),  // ESC: a terminal command
      ("\u{9B}31mred", "\\u{9B}31mred"),  // the C1 CSI: a command without ESC
      ("a\u{7}b\u{8}c\u{7F}", "a\\u{7}b\\u{8}c\\u{7F}"),  // bell, backspace, DEL
      ("one\ntwo\r\tthree\0", "one\\ntwo\\r\\tthree\\u{0}"),
      ("abc\u{202E}fed", "abc\\u{202E}fed"),  // a bidirectional override reorders what follows
      ("pay\u{200B}pal\u{FEFF}", "pay\\u{200B}pal\\u{FEFF}"),  // zero-width space, byte-order mark
      ("line\u{2028}next", "line\\u{2028}next"),
      ("a\u{E0041}\u{E0042}", "a\\u{E0041}\\u{E0042}"),  // tag characters: text nobody sees
      ("\u{115F}", "\\u{115F}"),  // a Hangul filler: drawn as nothing
      ("\u{10FFFF}", "\\u{10FFFF}"),  // not a character
    ])
  func escapesHiddenCharacters(text: String, shown: String) {
    #expect(text.escapedForTerminal() == shown)
  }

  @Test(
    "what a terminal draws is kept as it is: accents, scripts, emoji with their joiners, a backslash",
    arguments: [
      "Zürich", "Zu\u{308}rich", "東京", "Αθήνα", "👨‍👩‍👧", "❤️", "1️⃣", "🇬🇧", "C:\\dir", "\\u{1B}", "a\u{A0}b",
    ])
  func keepsVisibleText(text: String) {
    #expect(text.escapedForTerminal() == text)
  }

  @Test("escaping is bounded in Unicode scalars, even in one character, and never cuts an escape in half")
  func bounded() {
    let long = String(repeating: "x", count: 200_000)
    #expect(long.escapedForTerminal() == String(repeating: "x", count: EchoLimit.input) + "…")
    #expect(long.escapedForTerminal(limit: 3) == "xxx…")
    #expect("xxx".escapedForTerminal(limit: 3) == "xxx")
    // One character: a letter under 200,000 combining marks.
    let zalgo = "a" + String(repeating: "\u{301}", count: 200_000)
    #expect(zalgo.count == 1)
    #expect(zalgo.escapedForTerminal().unicodeScalars.count == EchoLimit.input + 1)
    // `\u{1B}` is 6 scalars: after 2 letters, 2 more do not fit in 5.
    #expect("ab\u{1B}cd".escapedForTerminal(limit: 5) == "ab…")
    #expect("ab\u{1B}cd".escapedForTerminal(limit: 8) == "ab\\u{1B}…")
  }

  @Test("escaping twice reads the same as once: a message quoting input can be escaped again where it is drawn")
  func idempotent() {
    for text in [
      "Leeds\u{1B}[2J\u{202E}", String(repeating: "\u{7}", count: 100), String(repeating: "ab", count: 100),
      "é\u{200B}",
    ] {
      let once = text.escapedForTerminal()
      #expect(once.escapedForTerminal() == once)
      #expect(once.escapedForTerminal(limit: EchoLimit.message) == once)
    }
  }

  // MARK: - A reader that leaves

  /// An example, and how to make it write once its reader has left.
  struct ReaderLeaves: Sendable, CustomTestStringConvertible {
    var product: String
    var arguments: [String] = []
    /// A line of its first screen: the program is running.
    var firstScreen: String
    /// Typed once the test has stopped reading: a command that writes.
    var typed: String?

    var testDescription: String { product }
  }

  @Test(
    "every example ends quietly with status 0 when the reader of its output leaves (`| head -1`), not by SIGPIPE",
    arguments: [
      ReaderLeaves(product: "Counter", firstScreen: "for await   count 0, step 1", typed: "+\n"),
      ReaderLeaves(
        product: "Login", arguments: ["--latency", "0"],
        firstScreen: "  Type a phone number, then Enter. report FILE writes a bug report; q quits.",
        typed: "12\n"),
      ReaderLeaves(
        product: "PropertySearch", arguments: ["--latency", "0"],
        firstScreen: "  asynccore://property/42. report FILE writes a bug report; q quits.",
        typed: "Leeds\n"),
      ReaderLeaves(
        product: "PropertyScene", arguments: ["--latency", "0"], firstScreen: "  Type save, contact, book, back, or q.",
        typed: "fly\n"),
      // It writes a line every 10 ms by itself.
      ReaderLeaves(
        product: "OrderService", arguments: ["--producers", "2", "--refresh", "0.01"],
        firstScreen: "OrderService: 2 producers at 500 orders/s each. Ctrl-C stops it."),
    ])
  func endsQuietlyWhenTheReaderLeaves(_ example: ReaderLeaves) async throws {
    let program = try ExampleProgram.start(
      example.product, arguments: example.arguments, keepingInputOpen: example.typed != nil)
    defer { program.terminate() }
    var lines = program.output.makeAsyncIterator()
    var seen: [String] = []
    while let line = await lines.next() {
      seen.append(line)
      if line == example.firstScreen { break }
    }
    try #require(seen.last == example.firstScreen, "the program ended before its first screen: \(seen)")
    // The pipe is closed at the program's next write; it then writes again
    // (the rest of what the command writes, the bye line at the end of its
    // input, the service's next line) to a pipe nobody reads.
    program.stopReading()
    if let typed = example.typed { program.type(typed) }
    while await lines.next() != nil {}  // the pipe is closed
    program.closeInput()
    let status = await program.exitStatus()
    #expect(status == .exited(0))
  }
}

@Suite("Input lines", .hangDetector)
struct InputLinesTests {
  @Test("lines read ahead and never taken (after q) do not stop the program when the lines go away")
  func unreadLinesAtTheEnd() async {
    // libdispatch stops a program whose semaphore goes away below the value
    // it was made with: the lines read ahead hold places of it.
    await #expect(processExitsWith: .success) {
      let released = await InputLinesTests.readTheFirstLineThenLetGo()
      // The reading thread lets go of the lines just after it ends them:
      // the last of the two releases runs `deinit`.
      while released.isAlive { await Task.yield() }
    }
  }

  /// Reads "q" of five lines, waits until the other four are read ahead
  /// (never to be taken), and lets go of the lines: returned, the function
  /// holds nothing (an optimiser may end a local's lifetime late, but not
  /// after its function returns).
  static func readTheFirstLineThenLetGo() async -> WeakReference<InputLines> {
    let source = LineSource(["q", "+", "+", "+", "+"])
    let ended = AsyncStream<Void>.makeStream()
    let lines = InputLines([], readingWith: { source.next() }, onEnd: { ended.continuation.yield() })
    var iterator = lines.makeAsyncIterator()
    guard await iterator.next() == "q" else { fatalError("the first line is not q") }
    for await _ in ended.stream { break }  // every line read: four never taken
    return WeakReference(lines)
  }
}

/// A reference that does not keep its object alive.
final class WeakReference<Object: AnyObject>: @unchecked Sendable {
  // Safety: written once, in `init`; a weak reference is read and cleared
  // atomically by the runtime.
  private weak var object: Object?

  init(_ object: Object) {
    self.object = object
  }

  var isAlive: Bool { object != nil }
}

/// Lines handed out one by one to a reading thread.
final class LineSource: Sendable {
  private let lines: Mutex<[String]>

  init(_ lines: [String]) {
    self.lines = Mutex(lines)
  }

  func next() -> String? {
    lines.withLock { $0.isEmpty ? nil : $0.removeFirst() }
  }
}
