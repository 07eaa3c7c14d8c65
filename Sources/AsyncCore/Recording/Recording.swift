/// A core's actions with their times, the state before the first and the
/// state after the last: what ``Core/record(last:)`` captures, what a bug
/// report holds, and what ``Core/replay(_:)`` (or `TestCore.replay`) runs
/// again.
///
/// ```swift
/// let recorder = await core.record(last: 500)
/// // … the app runs; something goes wrong …
/// let recording = await recorder.recording()
/// print(recording.actions.count, "actions;", recording.initialState, "→", recording.finalState)
/// ```
///
/// Reducing ``actions`` in order from ``initialState``, starting no effect,
/// gives ``finalState``: the actions are those the reducer ran, the
/// follow-ups that effects sent included (after any middleware, which a
/// replay does not run again).
///
/// With `Codable` state and actions a recording is `Codable` too, as one
/// JSON document (AsyncCoreJournal's `write(to:)` and `init(contentsOf:)`
/// write and read it as a file):
///
/// ```
/// {"entries":[{"action":…,"nanoseconds":1250000000},…],"finalState":…,
///  "format":"asynccore-recording","initialState":…,"version":1}
/// ```
///
/// Decoding checks `format` and `version` and throws a `DecodingError`
/// naming what it found otherwise. A recording of types that are not
/// `Codable` is not `Codable`: writing it to a file does not compile.
public struct Recording<State: Sendable, Action: Sendable>: Sendable {
  /// One recorded action and when the core reduced it.
  ///
  /// ```swift
  /// for entry in recording.entries {
  ///   print(entry.time, entry.action)   // 1.25 seconds .search("flat")
  /// }
  /// ```
  public struct Entry: Sendable {
    /// The action the reducer ran.
    ///
    /// ```swift
    /// let searches = recording.entries.filter { if case .search = $0.action { true } else { false } }
    /// ```
    public var action: Action
    /// Time since the recording started, by the core's clock, in whole nanoseconds.
    ///
    /// ```swift
    /// let gaps = zip(recording.entries, recording.entries.dropFirst()).map { $1.time - $0.time }
    /// ```
    public var time: Duration

    /// An entry for `action`, reduced `time` after the recording started.
    ///
    /// ```swift
    /// let entry = Recording<Counter, CounterAction>.Entry(action: .increment, time: .milliseconds(250))
    /// ```
    public init(action: Action, time: Duration) {
      self.action = action
      self.time = time
    }
  }

  /// The state before the first of ``entries``: where a replay starts.
  ///
  /// ```swift
  /// let core = Core(initialState: recording.initialState, reducer: counterReducer)
  /// ```
  public var initialState: State
  /// The actions, oldest first, each with its time.
  ///
  /// ```swift
  /// print(recording.entries.last?.time ?? .zero)   // how long the recording ran
  /// ```
  public var entries: [Entry]
  /// The state after the last of ``entries``: what a replay must reproduce.
  ///
  /// ```swift
  /// try await core.replay(recording.actions)
  /// assert(await core.state == recording.finalState)
  /// ```
  public var finalState: State

  /// The actions of ``entries``, in order, without their times.
  ///
  /// ```swift
  /// try await core.replay(recording.actions)
  /// ```
  public var actions: [Action] { entries.map(\.action) }

  /// A recording of `entries` taking `initialState` to `finalState`: what a
  /// test builds by hand.
  ///
  /// ```swift
  /// let recording = Recording(
  ///   initialState: Counter(),
  ///   entries: [.init(action: .increment, time: .zero), .init(action: .increment, time: .seconds(1))],
  ///   finalState: Counter(count: 2))
  /// ```
  public init(initialState: State, entries: [Entry], finalState: State) {
    self.initialState = initialState
    self.entries = entries
    self.finalState = finalState
  }
}

extension Recording: Equatable where State: Equatable, Action: Equatable {}
extension Recording.Entry: Equatable where Action: Equatable {}

extension Recording {
  /// What the `format` key of a recording's JSON holds.
  static var formatName: String { "asynccore-recording" }
  /// The version of the JSON shape this code writes and reads.
  static var formatVersion: Int { 1 }
}

extension Recording: Codable where State: Codable, Action: Codable {
  private enum CodingKeys: String, CodingKey {
    case format, version, initialState, entries, finalState
  }

  /// Decodes a recording, checking its `format` and `version` first.
  ///
  /// ```swift
  /// let recording = try JSONDecoder().decode(Recording<Counter, CounterAction>.self, from: data)
  /// ```
  ///
  /// - Throws: `DecodingError.dataCorrupted` naming what was found when the
  ///   document is not a recording (another `format`) or is of another
  ///   `version`; the decoder's own errors otherwise (an unknown action case).
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let format = try container.decodeIfPresent(String.self, forKey: .format)
    guard format == Self.formatName else {
      throw DecodingError.dataCorruptedError(
        forKey: .format, in: container,
        debugDescription: "not an AsyncCore recording: format is \(format.map { "\"\($0)\"" } ?? "missing"), "
          + "not \"\(Self.formatName)\"")
    }
    let version = try container.decode(Int.self, forKey: .version)
    guard version == Self.formatVersion else {
      throw DecodingError.dataCorruptedError(
        forKey: .version, in: container,
        debugDescription: "a recording of version \(version), which this version (\(Self.formatVersion)) does not read")
    }
    self.init(
      initialState: try container.decode(State.self, forKey: .initialState),
      entries: try container.decode([Entry].self, forKey: .entries),
      finalState: try container.decode(State.self, forKey: .finalState))
  }

  /// Encodes the recording with its `format` and `version`.
  ///
  /// ```swift
  /// let encoder = JSONEncoder()
  /// encoder.outputFormatting = [.sortedKeys]
  /// let data = try encoder.encode(recording)
  /// ```
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(Self.formatName, forKey: .format)
    try container.encode(Self.formatVersion, forKey: .version)
    try container.encode(initialState, forKey: .initialState)
    try container.encode(entries, forKey: .entries)
    try container.encode(finalState, forKey: .finalState)
  }
}

extension Recording.Entry: Codable where Action: Codable {
  private enum CodingKeys: String, CodingKey {
    case nanoseconds, action
  }

  /// Decodes an entry: its time in whole nanoseconds, and its action.
  ///
  /// ```swift
  /// let entry = try JSONDecoder().decode(
  ///   Recording<Counter, CounterAction>.Entry.self, from: Data(#"{"nanoseconds":5,"action":"increment"}"#.utf8))
  /// ```
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let nanoseconds = try container.decode(Int64.self, forKey: .nanoseconds)
    self.init(action: try container.decode(Action.self, forKey: .action), time: .nanoseconds(nanoseconds))
  }

  /// Encodes the entry: its time in whole nanoseconds (cut toward zero),
  /// and its action.
  ///
  /// ```swift
  /// let data = try JSONEncoder().encode(Recording<Counter, CounterAction>.Entry(action: .increment, time: .seconds(1)))
  /// ```
  ///
  /// - Throws: `EncodingError.invalidValue` for a time beyond what 64 bits
  ///   of nanoseconds hold (about 292 years).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    guard let nanoseconds = time.wholeNanoseconds else {
      throw EncodingError.invalidValue(
        time,
        EncodingError.Context(
          codingPath: container.codingPath + [CodingKeys.nanoseconds],
          debugDescription: "\(time) does not fit in 64 bits of nanoseconds"))
    }
    try container.encode(nanoseconds, forKey: .nanoseconds)
    try container.encode(action, forKey: .action)
  }
}

extension Duration {
  /// The duration in whole nanoseconds, cut toward zero; `nil` when that
  /// does not fit in an `Int64`.
  var wholeNanoseconds: Int64? {
    let (seconds, attoseconds) = components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return nil }
    let (total, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
    return overflowAgain ? nil : total
  }

  /// The duration cut toward zero to whole nanoseconds (or as it is, if it
  /// holds more than 64 bits of them).
  var truncatedToNanoseconds: Duration {
    let (seconds, attoseconds) = components
    return Duration(secondsComponent: seconds, attosecondsComponent: attoseconds - attoseconds % 1_000_000_000)
  }
}
