#if Logging
  import AsyncCore
  import AsyncCoreTesting
  import Logging
  import Synchronization
  import Testing

  /// A swift-log handler that keeps what it is given.
  private struct CapturingHandler: LogHandler {
    struct Entry: Sendable {
      var level: Logger.Level
      var message: String
      var metadata: Logger.Metadata
      var file: String
      var line: UInt
    }

    let entries: Entries
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
      entries.append(
        Entry(
          level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:], file: event.file,
          line: event.line))
    }
  }

  private final class Entries: Sendable {
    private let storage = Mutex<[CapturingHandler.Entry]>([])
    func append(_ entry: CapturingHandler.Entry) { storage.withLock { $0.append(entry) } }
    var all: [CapturingHandler.Entry] { storage.withLock { $0 } }
  }

  private struct Refusal: Error, CustomStringConvertible {
    var description: String { "the disk is full" }
  }

  @Suite("Logging trait: diagnostics written to a swift-log Logger")
  struct LoggingTests {
    private func logger() -> (Logger, Entries) {
      let entries = Entries()
      return (Logger(label: "asynccore.test") { _ in CapturingHandler(entries: entries) }, entries)
    }

    @Test("an error an effect throws is logged at .error, with the place and the error as metadata")
    func effectError() async throws {
      let (logger, entries) = logger()
      let core = Core<Int, Int>(initialState: 0, diagnostics: EffectFailure.log(to: logger)) { _, _ in
        .run { _ in throw Refusal() }
      }
      try await core.dispatch(1)
      try await core.waitUntilIdle()
      let entry = try #require(entries.all.first)
      #expect(entries.all.count == 1)
      #expect(entry.level == .error)
      #expect(entry.metadata["asynccore.kind"] == "effect")
      #expect(entry.metadata["asynccore.error"] == "the disk is full")
      #expect(entry.file.hasSuffix("LoggingTests.swift"))
      #expect(entry.metadata["asynccore.file"] == .string(entry.file))
      #expect(entry.metadata["asynccore.line"] == .string("\(entry.line)"))
      #expect(entry.message.contains("the disk is full"))
    }

    @Test(
      "each diagnostic kind has its level and its fields",
      arguments: [
        (CoreDiagnostic.journalFailed(Refusal()), Logger.Level.error, "journalFailed", ["asynccore.error"]),
        (
          .notJournaled(action: "pay", error: Refusal()), .error, "notJournaled",
          ["asynccore.action", "asynccore.error"]
        ),
        (.syncFailed(Refusal()), .error, "syncFailed", ["asynccore.error"]),
        (.snapshotFailed(Refusal()), .warning, "snapshotFailed", ["asynccore.error"]),
        (
          .activationFailed(entity: "ada", error: Refusal()), .error, "activationFailed",
          ["asynccore.entity", "asynccore.error"]
        ),
        (
          .notActivated(entity: "ada", action: "pay", error: Refusal()), .error, "notActivated",
          ["asynccore.entity", "asynccore.action", "asynccore.error"]
        ),
        (
          .passivationFailed(entity: "ada", error: Refusal()), .warning, "passivationFailed",
          ["asynccore.entity", "asynccore.error"]
        ),
        (
          .childNotFound(child: "\\Todos.rows[id: 3]", action: "toggle"), .notice, "childNotFound",
          ["asynccore.child", "asynccore.action"]
        ),
        (
          .duplicateID(id: "3", collection: "\\Todos.rows"), .warning, "duplicateID",
          ["asynccore.id", "asynccore.collection"]
        ),
        (
          .sendRefused(action: "late", startedBy: "load", reason: .effectEnded), .warning, "sendRefused",
          ["asynccore.action", "asynccore.startedBy", "asynccore.reason"]
        ),
        (
          .sendRefused(action: "late", startedBy: "load", reason: .coreStopped), .notice, "sendRefused",
          ["asynccore.action", "asynccore.startedBy", "asynccore.reason"]
        ),
        (.effectRefused, .notice, "effectRefused", []),
      ] as [(CoreDiagnostic, Logger.Level, String, [String])])
    func kinds(diagnostic: CoreDiagnostic, level: Logger.Level, kind: String, fields: [String]) throws {
      let (logger, entries) = logger()
      EffectFailure.log(to: logger)(EffectFailure(error: diagnostic, fileID: "Orders/Orders.swift", line: 42))
      let entry = try #require(entries.all.first)
      #expect(entry.level == level)
      #expect(entry.message == EffectFailure(error: diagnostic, fileID: "Orders/Orders.swift", line: 42).description)
      #expect(entry.metadata["asynccore.kind"] == .string(kind))
      #expect(entry.file == "Orders/Orders.swift" && entry.line == 42)
      let expected = Set(fields + ["asynccore.kind", "asynccore.file", "asynccore.line"])
      #expect(Set(entry.metadata.keys) == expected)
      if fields.contains("asynccore.entity") { #expect(entry.metadata["asynccore.entity"] == "ada") }
      if fields.contains("asynccore.error") { #expect(entry.metadata["asynccore.error"] == "the disk is full") }
    }

    @Test("a value longer than 200 bytes is cut, and a newline in it escaped: one line each")
    func longValues() throws {
      let (logger, entries) = logger()
      let action = String(repeating: "x", count: 1_000) + "\nsecond line"
      EffectFailure.log(to: logger)(
        EffectFailure(error: CoreDiagnostic.notJournaled(action: action, error: Refusal()), fileID: "A.swift", line: 1))
      let value = try #require(entries.all.first?.metadata["asynccore.action"])
      #expect(!"\(value)".contains("\n"))
      #expect("\(value)".utf8.count < 260)
    }
  }
#endif
