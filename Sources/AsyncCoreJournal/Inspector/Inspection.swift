import AsyncCore

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the inspector does with a journal or a recording, with the user's
/// types (`reducer` set) or without them (`JSONValue`, no reducer: only
/// `verify` and `list`).
struct Inspection<State: Codable & Sendable, Action: Codable & Sendable> {
  /// Where a journal that holds its first record starts; `nil` untyped.
  let initialState: State?
  /// What replays; `nil` untyped.
  let reducer: Reduce<State, Action>?
  /// What a journal's records and snapshots were encoded with.
  let codec: any JournalCodec

  /// The widest one-line rendering of an action, in UTF-8 bytes.
  static var lineLimit: Int { 160 }
  /// The longest rendering of a state on a timeline page, in UTF-8 bytes:
  /// a page holds one per step, so this and `--limit` bound its size.
  static var stateLimit: Int { 4_096 }
  /// The most lines about records that do not decode one command prints;
  /// an inspector built with other types would otherwise print one per
  /// record.
  static var undecodableLines: Int { 10 }

  // MARK: verify

  func verify(_ source: InspectorSource, _ output: InspectorOutput) throws(InspectorFailure) -> Int32 {
    switch source {
    case .journal(let directory):
      var records = 0
      var snapshots = 0
      var undecoded = 0
      let problems = try scan(directory, output) { item in
        switch item {
        case .record(let record, let path, let offset):
          records += 1
          if reducer != nil, let why = undecodable(record.body) {
            undecoded += 1
            if undecoded <= Self.undecodableLines {
              output.error("\(logSafe(path)) at offset \(offset): record \(record.sequence) \(why)")
            }
            return 1
          }
        case .snapshot: snapshots += 1
        case .segment, .problem: break
        }
        return 0
      }
      if undecoded > Self.undecodableLines {
        output.error("\(undecoded - Self.undecodableLines) more records do not decode as \(Action.self)")
      }
      output.line("\(records) records, \(snapshots) snapshots: " + (problems > 0 ? "damaged" : "ok"))
      return problems > 0 ? 1 : 0
    case .recording(let path):
      let recording = try read(path)
      var damaged = false
      if let reducer {
        var state = recording.initialState
        for entry in recording.entries { reducer.replay(entry.action, into: &state) }
        if !same(state, recording.finalState) {
          let first = differences(recording.finalState, state).prefix(3).joined(separator: "; ")
          output.error(
            "\(logSafe(path)): replaying its \(recording.entries.count) actions does not give its final state "
              + "(recorded, replayed): \(first)")
          damaged = true
        }
      }
      output.line("\(recording.entries.count) actions: " + (damaged ? "damaged" : "ok"))
      return damaged ? 1 : 0
    }
  }

  // MARK: list

  func list(_ source: InspectorSource, filter: String?, _ output: InspectorOutput) throws(InspectorFailure) -> Int32 {
    switch source {
    case .journal(let directory):
      var index = 0
      var firstTime: Int64?
      let problems = try scan(directory, output) { item in
        switch item {
        case .snapshot(_, let sequence, let state):
          if filter == nil { output.line("snapshot  through \(sequence)  \(state.count) bytes of state") }
        case .record(let record, let path, let offset):
          index += 1
          let start = firstTime ?? record.time
          firstTime = start
          let rendered: (name: String?, line: String)
          if reducer != nil {
            guard let action = try? codec.decode(Action.self, from: record.body) else {
              output.error(
                "\(logSafe(path)) at offset \(offset): record \(record.sequence) \(undecodable(record.body) ?? "")")
              return 1
            }
            rendered = (Self.caseName(action), Self.line(action))
          } else {
            rendered = (Self.jsonName(record.body), Self.bodyLine(record.body))
          }
          if let filter, rendered.name != filter { return 0 }
          output.line("\(record.sequence)  \(Self.seconds(record.time, since: start))  \(rendered.line)")
        case .segment, .problem: break
        }
        return 0
      }
      return problems > 0 ? 1 : 0
    case .recording(let path):
      let recording = try read(path)
      for (offset, entry) in recording.entries.enumerated() {
        let name = reducer != nil ? Self.caseName(entry.action) : jsonName(of: entry.action)
        if let filter, name != filter { continue }
        let line = reducer != nil ? Self.line(entry.action) : jsonLine(of: entry.action)
        output.line("\(offset + 1)  \(Self.seconds(Self.nanoseconds(entry.time), since: 0))  \(line)")
      }
      return 0
    }
  }

  // MARK: state and diff

  func state(_ source: InspectorSource, at target: Int, _ output: InspectorOutput) throws(InspectorFailure) -> Int32 {
    let reducer = try typed("state")
    let state = try replay(source, reducer, through: target)
    output.line(pretty(state))
    return 0
  }

  func diff(_ source: InspectorSource, from: Int, to: Int, _ output: InspectorOutput) throws(InspectorFailure)
    -> Int32
  {
    let reducer = try typed("diff")
    let before = try replay(source, reducer, through: from)
    let after = try replay(source, reducer, through: to)
    if same(before, after) {
      output.line("no differences")
    } else {
      for line in differences(before, after) { output.line(line) }
    }
    return 0
  }

  // MARK: html

  func html(_ source: InspectorSource, to file: String, limit: Int, _ output: InspectorOutput) throws(InspectorFailure)
    -> Int32
  {
    let reducer = try typed("html")
    try Self.refuseOverwriting(source, with: file)
    var kept = Ring<Step>(capacity: limit)
    var title: String
    switch source {
    case .journal(let directory):
      title = "journal " + directory
      _ = try replayJournal(directory, reducer, through: nil, output) { step in kept.append(step) }
    case .recording(let path):
      title = "recording " + path
      let recording = try read(path)
      var state = recording.initialState
      for (offset, entry) in recording.entries.enumerated() {
        let before = state
        reducer.replay(entry.action, into: &state)
        kept.append(
          Step(
            index: offset + 1, nanoseconds: Self.nanoseconds(entry.time), action: entry.action, before: before,
            after: state))
      }
    }
    title = logSafe(title, quoted: false, limit: 200)
    let steps = kept.elements
    let start = steps.first?.nanoseconds
    let page = TimelinePage.html(
      title: title,
      steps: steps.map { step in
        TimelineStep(
          index: step.index,
          seconds: start.map { Double(step.nanoseconds - $0) / 1e9 },
          name: Self.caseName(step.action),
          line: Self.line(step.action),
          differences: same(step.before, step.after) ? [] : differences(step.before, step.after),
          state: ValueRendering.bounded(pretty(step.after), to: Self.stateLimit))
      },
      omitted: kept.dropped)
    try Self.writeFile(Array(page.utf8), to: file)
    let left = kept.dropped > 0 ? " (the \(kept.dropped) before them left out: --limit)" : ""
    output.line("wrote \(steps.count) steps to \(logSafe(file, quoted: false, limit: 400))\(left)")
    return 0
  }

  // MARK: replay

  /// One replayed action.
  struct Step {
    var index: Int
    var nanoseconds: Int64
    var action: Action
    var before: State
    var after: State
  }

  private func typed(_ command: String) throws(InspectorFailure) -> Reduce<State, Action> {
    guard let reducer else {
      throw InspectorFailure(
        "\(command) replays, so it needs your State, Action and reducer: build a small executable that calls "
          + "Inspector.run(_:initialState:reducer:) from AsyncCoreJournal")
    }
    return reducer
  }

  /// The state after action `target` (0: before the first).
  private func replay(_ source: InspectorSource, _ reducer: Reduce<State, Action>, through target: Int)
    throws(InspectorFailure) -> State
  {
    switch source {
    case .journal(let directory):
      return try replayJournal(directory, reducer, through: UInt64(target), nil, step: nil)
    case .recording(let path):
      let recording = try read(path)
      guard target <= recording.entries.count else {
        throw InspectorFailure(
          "action \(target) is past the recording's last (\(recording.entries.count))", status: 1)
      }
      var state = recording.initialState
      for entry in recording.entries.prefix(target) { reducer.replay(entry.action, into: &state) }
      return state
    }
  }

  /// Replays a journal's records through `target` (every record: `nil`),
  /// from the newest snapshot at or before it, or from `initialState` when
  /// the journal still holds its first record; `step` sees each replayed
  /// record. Every problem met before `target` ends it.
  private func replayJournal(
    _ directory: String, _ reducer: Reduce<State, Action>, through target: UInt64?, _ output: InspectorOutput?,
    step: ((Step) -> Void)?
  ) throws(InspectorFailure) -> State {
    var snapshots: [(sequence: UInt64, path: String, state: [UInt8])] = []
    var base: (sequence: UInt64, state: State)?
    var failure: InspectorFailure?
    var last: UInt64?
    var unreadable: String?

    func choose(firstHeld: UInt64?) {
      let limit = target ?? firstHeld.map { $0 - 1 } ?? .max
      var candidates = snapshots.filter { $0.sequence <= limit }
      if target == nil, candidates.isEmpty, let oldest = snapshots.first { candidates = [oldest] }
      let fromStart = firstHeld == 1 || firstHeld == nil && snapshots.isEmpty
      if let newest = candidates.last, !fromStart || newest.sequence > 0 {
        do {
          base = (newest.sequence, try codec.decode(State.self, from: newest.state))
        } catch {
          failure = InspectorFailure(
            "\(logSafe(newest.path)): its state does not decode as \(State.self): \(Self.oneLine(error))", status: 1)
        }
      } else if fromStart, let initialState {
        base = (0, initialState)
      } else {
        let oldest = snapshots.first.map { "its oldest snapshot covers through \($0.sequence)" } ?? "it has no snapshot"
        let first = firstHeld.map { ", its first record is \($0)" } ?? ""
        failure = InspectorFailure(
          "action \(target ?? 0) is before what the journal holds (\(oldest)\(first))", status: 1)
      }
    }

    var state: State?
    do {
      try JournalReader(directory: directory).scan { item in
        guard failure == nil else { return .stop }
        switch item {
        case .snapshot(let path, let sequence, let bytes):
          snapshots.append((sequence, path, bytes))
        case .segment(_, let first):
          if base == nil { choose(firstHeld: first) }
          state = state ?? base?.state
        case .record(let record, let path, let offset):
          // Nothing after the target is needed: the scan stops there and
          // reads no further (a later file's damage is not this state's).
          if let target, record.sequence > target { return .stop }
          let next: JournalReader.ScanControl = record.sequence == target ? .stop : .proceed
          guard let current = state, let from = base?.sequence, record.sequence > from else { return next }
          guard let action = try? codec.decode(Action.self, from: record.body) else {
            failure = InspectorFailure(
              "\(logSafe(path)) at offset \(offset): record \(record.sequence) \(undecodable(record.body) ?? "")",
              status: 1)
            return .stop
          }
          var after = current
          reducer.replay(action, into: &after)
          step?(
            Step(index: Int(record.sequence), nanoseconds: record.time, action: action, before: current, after: after))
          state = after
          last = record.sequence
          return next
        case .problem(let problem):
          if problem.makesJournalUnreadable {
            unreadable = problem.description
          } else if target.map({ (last ?? base?.sequence ?? 0) < $0 }) ?? true {
            failure = InspectorFailure(problem.description, status: 1)
            return .stop
          }
        }
        return .proceed
      }
    } catch {
      throw InspectorFailure("\(error)")
    }
    if let unreadable { throw InspectorFailure(unreadable) }
    if let failure { throw failure }
    if base == nil { choose(firstHeld: nil) }
    if let failure { throw failure }
    guard let base else { throw InspectorFailure("nothing to replay", status: 1) }
    let reached = last ?? base.sequence
    if let target, reached < target {
      throw InspectorFailure("action \(target) is past the journal's last record (\(reached))", status: 1)
    }
    return state ?? base.state
  }

  // MARK: reading

  /// Walks a journal, printing each problem; `visit` returns how many
  /// problems of its own it printed. Returns the problems in all.
  private func scan(_ directory: String, _ output: InspectorOutput, _ visit: (JournalReader.Item) -> Int)
    throws(InspectorFailure) -> Int
  {
    var problems = 0
    var unreadable: String?
    do {
      try JournalReader(directory: directory).scan { item in
        if case .problem(let problem) = item {
          if problem.makesJournalUnreadable {
            unreadable = problem.description
            return .proceed
          }
          problems += 1
          output.error(problem.description)
        }
        problems += visit(item)
        return .proceed
      }
    } catch {
      throw InspectorFailure("\(error)")
    }
    if let unreadable { throw InspectorFailure(unreadable) }
    return problems
  }

  private func read(_ path: String) throws(InspectorFailure) -> Recording<State, Action> {
    do {
      return try Recording<State, Action>(contentsOf: path)
    } catch {
      if case .cannotRead = error { throw InspectorFailure(error.description) }
      throw InspectorFailure(error.description, status: 1)
    }
  }

  /// Why `body` does not decode as an action, or `nil` when it does.
  private func undecodable(_ body: [UInt8]) -> String? {
    do {
      _ = try codec.decode(Action.self, from: body)
      return nil
    } catch {
      return "does not decode as \(Action.self): \(Self.oneLine(error))"
    }
  }
}

extension JournalProblem {
  /// Not a journal, or one changing too fast to read: the command cannot
  /// use its path (status 2), rather than finding damage in it.
  fileprivate var makesJournalUnreadable: Bool {
    switch reason {
    case .notAJournal, .changing: true
    default: false
    }
  }
}
