import AsyncCore

/// What an observer delivers, as one comparable type.
enum Seen: Equatable, CustomStringConvertible {
  case state(ModelState)
  case int(Int)
  case record(Record)

  var description: String {
    switch self {
    case .state(let state): "\(state)"
    case .int(let value): "\(value)"
    case .record(let record): "[\(record.action): \(record.stateBefore) -> \(record.stateAfter)]"
    }
  }
}

/// One observer the sequence registered, with what the model says it must see.
final class Observer {
  enum Kind: CaseIterable {
    /// `states(buffering: .all)`: every state that differs from the one before.
    case everyState
    /// `observe(\.value, buffering: .all)`.
    case everyValue
    /// `states()`: latest, deduplicated.
    case latestState
    /// `observe(\.log.count)`: latest, deduplicated.
    case latestCount
    /// `actions()`: every record, never deduplicated.
    case actionLog

    var isLatest: Bool { self == .latestState || self == .latestCount }

    func select(_ state: ModelState) -> Seen {
      switch self {
      case .everyState, .latestState, .actionLog: .state(state)
      case .everyValue: .int(state.value)
      case .latestCount: .int(state.log.count)
      }
    }

    /// The guarantees a check of this observer depends on.
    var items: Set<Guarantee> {
      switch self {
      case .everyState: [.everyCallDeduplicates]
      case .latestState: [.latestAgainstLastTaken, .everyCallDeduplicates]
      case .latestCount: [.latestAgainstLastTaken]
      case .everyValue, .actionLog: []
      }
    }
  }

  let kind: Kind
  private let pull: () async -> Seen?
  /// Values taken so far.
  var taken = 0
  /// Latest observers: the last value taken and where it sits in the history.
  var lastTaken: Seen?
  var lastPosition = -1
  /// The history so far, and how many of the model's records it covers.
  private var values: [Seen]
  private var scanned: Int

  /// Registers an observer of `kind`; its stream stays unread until the
  /// first `next()`.
  init(kind: Kind, core: ModelCore, model: Model) async {
    self.kind = kind
    values = kind == .actionLog ? [] : [kind.select(model.state)]
    scanned = model.records.count
    switch kind {
    case .everyState: pull = Self.puller(await core.states(buffering: .all)) { .state($0) }
    case .everyValue: pull = Self.puller(await core.observe(\.value, buffering: .all)) { .int($0) }
    case .latestState: pull = Self.puller(await core.states()) { .state($0) }
    case .latestCount: pull = Self.puller(await core.observe(\.log.count)) { .int($0) }
    case .actionLog: pull = Self.puller(await core.actions()) { .record($0) }
    }
  }

  /// Holds `stream` unread until the first pull, then its iterator: an
  /// observer may stay registered without a loop for a while.
  private static func puller<Element: Sendable>(
    _ stream: CoreStream<Element>,
    _ wrap: @escaping (Element) -> Seen
  ) -> () async -> Seen? {
    var stream: CoreStream<Element>? = stream
    var iterator: CoreStream<Element>.Iterator?
    return {
      if let unread = stream {
        iterator = unread.makeAsyncIterator()
        stream = nil
      }
      return await iterator?.next().map(wrap)
    }
  }

  func next() async -> Seen? {
    await pull()
  }

  /// Every value the model says this observer receives in order (for the
  /// every-value kinds and the action log), or could receive (latest kinds).
  func history(_ model: Model) -> [Seen] {
    while scanned < model.records.count {
      let record = model.records[scanned]
      scanned += 1
      if kind == .actionLog {
        values.append(.record(record))
        continue
      }
      let value = kind.select(record.stateAfter)
      // Every observing call deduplicates Equatable values; latest
      // observers may take any of these, so they keep them all.
      if kind.isLatest || value != values.last { values.append(value) }
    }
    return values
  }

  /// Whether `next()` returns without waiting for anything but the core's
  /// own drain: an every-value observer has values the model reduced and it
  /// has not taken; a latest one (deduplicated against what it
  /// last took) whenever the current value differs from the last it took.
  func hasValue(_ model: Model) -> Bool {
    if kind.isLatest { return lastTaken.map { $0 != kind.select(model.state) } ?? true }
    return history(model).count > taken
  }
}
