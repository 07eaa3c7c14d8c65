import AsyncCore
import Foundation
import Testing

/// A recording's JSON: its shape, and what decoding refuses.
@Suite("Recording as JSON")
struct RecordingTests {
  struct Tally: Codable, Sendable, Equatable { var count = 0 }
  enum Step: Codable, Sendable, Equatable {
    case add(Int)
    case reset
  }

  static func json(_ recording: Recording<Tally, Step>) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(recording), as: UTF8.self)
  }

  static func decode(_ text: String) throws -> Recording<Tally, Step> {
    try JSONDecoder().decode(Recording<Tally, Step>.self, from: Data(text.utf8))
  }

  @Test("a recording encodes with its format, its version and each entry's time in nanoseconds, and decodes equal")
  func shapeAndRoundTrip() throws {
    let recording = Recording<Tally, Step>(
      initialState: Tally(count: 1),
      entries: [.init(action: .add(2), time: .milliseconds(1_250)), .init(action: .reset, time: .seconds(3))],
      finalState: Tally(count: 0))
    let text = try Self.json(recording)
    #expect(
      text
        == #"{"entries":[{"action":{"add":{"_0":2}},"nanoseconds":1250000000},{"action":{"reset":{}},"nanoseconds":3000000000}],"#
        + #""finalState":{"count":0},"format":"asynccore-recording","initialState":{"count":1},"version":1}"#)
    #expect(try Self.decode(text) == recording)
  }

  @Test("times finer than a nanosecond are cut toward zero when encoded")
  func subNanosecondTimesAreCut() throws {
    let recording = Recording<Tally, Step>(
      initialState: Tally(),
      entries: [
        .init(action: .reset, time: .nanoseconds(5) + .init(secondsComponent: 0, attosecondsComponent: 999_999_999))
      ],
      finalState: Tally())
    #expect(try Self.decode(Self.json(recording)).entries[0].time == .nanoseconds(5))
  }

  @Test("another format, a missing format and another version are refused with a message naming what was found")
  func formatAndVersionAreChecked() throws {
    let body = #""initialState":{"count":0},"entries":[],"finalState":{"count":0}"#
    let cases: [(text: String, message: String)] = [
      (
        #"{"format":"redux-devtools","version":1,"# + body + "}",
        #"not an AsyncCore recording: format is "redux-devtools", not "asynccore-recording""#
      ),
      (#"{"version":1,"# + body + "}", #"not an AsyncCore recording: format is missing, not "asynccore-recording""#),
      (
        #"{"format":"asynccore-recording","version":2,"# + body + "}",
        "a recording of version 2, which this version (1) does not read"
      ),
    ]
    for (text, message) in cases {
      do {
        _ = try Self.decode(text)
        Issue.record("decoded \(text)")
      } catch DecodingError.dataCorrupted(let context) {
        #expect(context.debugDescription == message)
      }
    }
  }
}
