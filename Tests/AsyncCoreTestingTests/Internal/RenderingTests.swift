import AsyncCore
import Testing

@testable import AsyncCoreTesting

/// What a failure shows: values as a test writes them, and the one field
/// (element, entry) that differs rather than whole collections.
@Suite("Failure messages render values as tests write them", .timeLimit(.minutes(1)))
struct RenderingTests {
  struct Child: Sendable, Equatable {
    var name: String
    var isDone = false
  }

  enum Phase: Sendable, Equatable {
    case idle
    case loading(id: Int, label: String?)
  }

  struct Board: Sendable, Equatable {
    var phase = Phase.idle
    var children = [Child(name: "a"), Child(name: "b")]
    var scores: [String: Int] = ["ann": 1, "bob": 2]
    var age: Int?
  }

  enum Move: Sendable, Equatable {
    case setPhase(Phase)
    case finish(Int)
    case score(String, Int)
    case setAge(Int?)
  }

  func makeStore() -> TestCore<Board, Move> {
    TestCore(
      initialState: Board(),
      reducer: Reduce { state, move in
        switch move {
        case .setPhase(let phase): state.phase = phase
        case .finish(let index): state.children[index].isDone = true
        case .score(let name, let score): state.scores[name] = score
        case .setAge(let age): state.age = age
        }
      })
  }

  @Test("enum payloads without module names or Optional(…); the differing array element and dictionary entry")
  func readable() async {
    let store = makeStore()
    var lines: [Int] = []
    await expectIssues(
      [
        ExpectedIssue(
          message: """
            send(.setPhase(.loading(id: 3, label: "x"))) left the state different from the expected one (expected, actual):
              phase: .loading(id: 3, label: nil), .loading(id: 3, label: "x")
            """, line: lines[0]),
        ExpectedIssue(
          message: """
            send(.finish(1)) left the state different from the expected one (expected, actual):
              children[1].isDone: false, true
            """, line: lines[1]),
        ExpectedIssue(
          message: """
            send(.score("cy", 3)) left the state different from the expected one (expected, actual):
              scores["bob"]: absent, 2
              scores["cy"]: absent, 3
            """, line: lines[2]),
        ExpectedIssue(
          message: """
            send(.setAge(5)) left the state different from the expected one (expected, actual):
              age: 6, 5
            """, line: lines[3]),
      ]
    ) {
      lines.append(#line + 1)
      await store.send(.setPhase(.loading(id: 3, label: "x"))) { $0.phase = .loading(id: 3, label: nil) }
      lines.append(#line + 1)
      await store.send(.finish(1))
      lines.append(#line + 1)
      await store.send(.score("cy", 3)) { $0.scores.removeValue(forKey: "bob") }
      lines.append(#line + 1)
      await store.send(.setAge(5)) { $0.age = 6 }
    }
  }

  @Test("an error type declared inside a test function is named by its type alone, with no module or address")
  func localErrorTypes() async {
    struct Boom: Error {}
    enum Outage: Error { case offline }
    let madeAt = "AsyncCoreTestingTests/RenderingTests.swift:\(#line + 2)"
    let store = TestCore<Int, Int>(initialState: 0) { _, action in
      action == 0 ? .none : .run { _ in if action == 1 { throw Boom() } else { throw Outage.offline } }
    }
    var lines: [Int] = []
    await expectIssues([
      ExpectedIssue(.updateThrew(step: "send(0)", error: "Boom()"), line: lines[0]),
      ExpectedIssue(.effectThrew(error: "Boom()", madeAt: madeAt), line: lines[1]),
      ExpectedIssue(.effectThrew(error: "Outage.offline", madeAt: madeAt), line: lines[2]),
    ]) {
      lines.append(#line + 1)
      await store.send(0) { _ in throw Boom() }
      await store.send(1)
      lines.append(#line + 1)
      await store.finish()
      await store.send(2)
      lines.append(#line + 1)
      await store.finish()
    }
  }

  @Test("a megabyte action, state or error makes a message of a few kilobytes, cut with a marker")
  func boundedMessages() async {
    struct Huge: Error, CustomStringConvertible {
      var description: String { String(repeating: "e", count: 1_000_000) }
    }
    let store = TestCore<String, String>(
      initialState: "",
      reducer: Reduce { state, action in
        state = action
      })
    let huge = String(repeating: "a", count: 1_000_000)
    let messages = Recorded<String>()
    await withKnownIssue {
      await store.send(huge) { $0 = "b" }
      await store.send("c") { _ in throw Huge() }
    } matching: { issue in
      messages.append(issue.comments.map(\.rawValue).joined())
      return true
    }
    #expect(messages.all.count == 2)
    for message in messages.all {
      #expect(message.count < 20_000)
      #expect(message.contains("… (cut after 4096 bytes)"))
    }
  }

  /// A value short in characters and long in scalars or bytes.
  enum Flood: String, CaseIterable, Sendable {
    case combiningMarksOnOneLetter, zeroWidthJoiners

    var text: String {
      switch self {
      case .combiningMarksOnOneLetter: "a" + String(repeating: "\u{301}", count: 1 << 20)
      case .zeroWidthJoiners: String(repeating: "\u{200D}", count: 1 << 20)
      }
    }
  }

  @Test(
    "a value of one character made of a million scalars, or of invisible characters, makes a bounded, escaped message",
    arguments: Flood.allCases)
  func boundedOnScalars(flood: Flood) async {
    let huge = flood.text
    let store = TestCore<String, String>(
      initialState: "",
      reducer: Reduce { state, action in
        state = action
      })
    let messages = Recorded<String>()
    await withKnownIssue {
      await store.send(huge) { $0 = "other" }
    } matching: { issue in
      messages.append(issue.comments.map(\.rawValue).joined())
      return true
    }
    #expect(messages.all.count == 1)
    for message in messages.all {
      #expect(message.utf8.count < 20_000)
      #expect(message.contains("… (cut after 4096 bytes)"))
      #expect(!message.contains("\u{200D}"), "a zero-width joiner left unescaped")
    }
  }

  @Test("control and format characters in a value are shown escaped")
  func invisibleCharactersAreEscaped() {
    struct Label: CustomStringConvertible { var description: String { "safe\u{202E}evil\u{1B}[2J" } }
    #expect(ValueRendering.value(Label()) == #"safe\u{202E}evil\u{1B}[2J"#)
    #expect(ValueRendering.value("plain") == #""plain""#)
  }

  @Test("a long array is rendered only as far as the cut")
  func longArray() {
    let text = ValueRendering.value(Array(0..<1_000_000))
    #expect(text.count < 5_000)
    #expect(text.hasPrefix("[0, 1, 2"))
    #expect(text.hasSuffix("… (cut after 4096 bytes)"))
  }

  @Test("a failed #require inside the closure is recorded once, by Swift Testing, at its own line")
  func requireRecordedOnce() async {
    let store = makeStore()
    let messages = Recorded<String>()
    await withKnownIssue {
      await store.send(.setAge(nil)) {
        let age = try #require($0.age)
        $0.age = age + 1
      }
    } matching: { issue in
      messages.append(issue.comments.map(\.rawValue).joined())
      return true
    }
    #expect(messages.all.count == 1)
    #expect(!messages.all.contains { $0.contains("threw") })
  }
}
