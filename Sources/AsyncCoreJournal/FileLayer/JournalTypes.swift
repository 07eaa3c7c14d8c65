import AsyncCore

/// What a journal is for: the names of its action and state types and the
/// user's schema version, written in the header of every file of the
/// journal and checked when it is opened.
///
/// ```swift
/// let identity = JournalIdentity(action: OrderAction.self, state: Orders.self, schemaVersion: 1)
/// ```
public struct JournalIdentity: Sendable, Hashable, CustomStringConvertible {
  /// The action type's name, as `String(reflecting:)` spells it, less the
  /// per-launch address in a `private` or local type's name.
  ///
  /// ```swift
  /// JournalIdentity(action: OrderAction.self, state: Orders.self, schemaVersion: 1).actionType  // "Shop.OrderAction"
  /// ```
  public var actionType: String
  /// The state type's name, as `String(reflecting:)` spells it, less the
  /// per-launch address in a `private` or local type's name.
  ///
  /// ```swift
  /// JournalIdentity(action: OrderAction.self, state: Orders.self, schemaVersion: 1).stateType  // "Shop.Orders"
  /// ```
  public var stateType: String
  /// The version of the encoded actions and state, which the user raises
  /// when a change makes old records unreadable.
  ///
  /// ```swift
  /// JournalIdentity(action: OrderAction.self, state: Orders.self, schemaVersion: 2).schemaVersion  // 2
  /// ```
  public var schemaVersion: Int

  /// The identity of a journal of `action`s reduced into `state`: their
  /// module-qualified names, so renaming either type or moving it to
  /// another module makes an existing journal incompatible. A `private` or
  /// local type is named without its file or function: two such types of
  /// one name in one module share an identity (give them distinct names,
  /// or distinct schema versions).
  ///
  /// ```swift
  /// let identity = JournalIdentity(action: OrderAction.self, state: Orders.self, schemaVersion: 1)
  /// ```
  public init<Action, State>(action: Action.Type, state: State.Type, schemaVersion: Int) {
    self.init(
      actionType: Self.stableName(of: action), stateType: Self.stableName(of: state), schemaVersion: schemaVersion)
  }

  /// The type's fully qualified name, the same in every run: a `private`
  /// or function-local type's name holds the address of its context
  /// (`Module.(unknown context at $55…).Name`), which changes with each
  /// launch, so that part is left out (`Module.Name`).
  static func stableName(of type: Any.Type) -> String {
    var name = String(reflecting: type)
    let marker = "(unknown context at $"
    while let start = name.firstRange(of: marker) {
      guard let close = name[start.upperBound...].firstIndex(of: ")") else { break }
      var end = name.index(after: close)
      if end < name.endIndex, name[end] == "." { end = name.index(after: end) }
      name.removeSubrange(start.lowerBound..<end)
    }
    return name
  }

  /// An identity from the type names themselves (a tool that reads a
  /// journal without the types).
  ///
  /// ```swift
  /// let identity = JournalIdentity(actionType: "Shop.OrderAction", stateType: "Shop.Orders", schemaVersion: 1)
  /// ```
  public init(actionType: String, stateType: String, schemaVersion: Int) {
    self.actionType = actionType
    self.stateType = stateType
    self.schemaVersion = schemaVersion
  }

  /// `Action → State, schema N`.
  ///
  /// ```swift
  /// print(identity)  // Shop.OrderAction → Shop.Orders, schema 1
  /// ```
  public var description: String { "\(actionType) → \(stateType), schema \(schemaVersion)" }
}

/// When appended records are forced to the disk with `fdatasync`.
///
/// ```swift
/// let (journal, _) = try Journal.open(directory: "orders.journal", identity: identity, durability: .everyAction)
/// ```
///
/// - Important: What survives what. A record `append` returned for is in
///   the operating system's cache under every policy, so it survives the
///   process being killed (`kill -9`). It survives the machine losing power
///   only once synced: under ``everyAction`` when `append` returns; under
///   ``interval(_:)`` after the next sync, at most the interval later (or
///   at `Core.sync()`); under ``operatingSystem`` when the kernel writes it
///   back (or at `Core.sync()`).
public enum JournalDurability: Sendable, Hashable {
  /// Every append is synced before it returns; a batch shares one sync.
  ///
  /// ```swift
  /// let journal = try FileJournal<Orders, OrderAction>(directory: path, durability: .everyAction)
  /// ```
  case everyAction
  /// At most one sync per interval, while records are unsynced: the core
  /// syncs on its own clock, and a busy journal as soon as the interval
  /// has passed.
  ///
  /// ```swift
  /// let journal = try FileJournal<Orders, OrderAction>(directory: path, durability: .interval(.milliseconds(50)))
  /// ```
  case interval(Duration)
  /// Never synced by the journal: the kernel writes the cache back on its
  /// own schedule.
  ///
  /// ```swift
  /// let journal = try FileJournal<Orders, OrderAction>(directory: path, durability: .operatingSystem)
  /// ```
  case operatingSystem
}

/// One record of a journal: its sequence number, the encoded action, and
/// when it was appended.
///
/// ```swift
/// let action = try codec.decode(OrderAction.self, from: record.body)
/// ```
package struct JournalRecord: Sendable, Hashable {
  /// The record's position in the journal, from 1, with no gap.
  ///
  /// ```swift
  /// print(record.sequence)  // 42
  /// ```
  package var sequence: UInt64
  /// The bytes appended (an encoded action).
  ///
  /// ```swift
  /// let action = try codec.decode(OrderAction.self, from: record.body)
  /// ```
  package var body: [UInt8]
  /// When the record was appended: nanoseconds since 1970-01-01 00:00 UTC,
  /// by the system's real-time clock, read once per
  /// ``Journal/append(_:)`` call, so the records of one batch (a group
  /// commit) share it.
  ///
  /// The wall clock can be set back: a later record's time is usually, not
  /// always, at or after an earlier one's. Two records' times give the
  /// time between them:
  ///
  /// ```swift
  /// let seconds = Double(later.time - first.time) / 1e9
  /// print("\(later.sequence) came \(seconds) s after \(first.sequence)")
  /// ```
  package var time: Int64

  /// A record (tests build expected values with it); `time` is 0 (the
  /// epoch) unless given.
  ///
  /// Equality compares the time too: a record read back from a journal
  /// carries the real time it was appended, so it equals one built here
  /// only with that time.
  ///
  /// ```swift
  /// let record = JournalRecord(sequence: 1, body: [1, 2, 3], time: 1_700_000_000_000_000_000)
  /// ```
  package init(sequence: UInt64, body: [UInt8], time: Int64 = 0) {
    self.sequence = sequence
    self.body = body
    self.time = time
  }
}

/// A snapshot read back: the encoded state after the record `sequence`.
///
/// ```swift
/// let state = try codec.decode(Orders.self, from: snapshot.state)
/// ```
package struct JournalSnapshot: Sendable, Hashable {
  /// The last record the state includes (0: none).
  ///
  /// ```swift
  /// print(snapshot.sequence)  // 1000
  /// ```
  package var sequence: UInt64
  /// The encoded state.
  ///
  /// ```swift
  /// let state = try codec.decode(Orders.self, from: snapshot.state)
  /// ```
  package var state: [UInt8]

  /// A snapshot (tests build expected values with it).
  ///
  /// ```swift
  /// let snapshot = JournalSnapshot(sequence: 10, state: [0x7B, 0x7D])
  /// ```
  package init(sequence: UInt64, state: [UInt8]) {
    self.sequence = sequence
    self.state = state
  }
}

/// A damaged part of a journal found when opening it, and where it was
/// moved: never deleted, so that it can be examined.
///
/// ```swift
/// for damage in recovered.damage {
///   print("\(damage.path) at \(damage.offset): \(damage.byteCount) bytes, \(damage.reason), kept in \(damage.asidePath)")
/// }
/// ```
public struct JournalDamage: Sendable, Hashable, CustomStringConvertible {
  /// Why a part of a journal was not used: the one vocabulary of damage,
  /// for recovery and for the read-only walk the inspector makes (which
  /// can see more, as it never stops at a refusal).
  ///
  /// ```swift
  /// if damage.reason == .tornRecord { print("the last write did not finish") }
  /// ```
  public enum Reason: Sendable, Hashable {
    /// The file ends inside a record: a write that did not finish.
    ///
    /// ```swift
    /// damage.reason == .tornRecord
    /// ```
    case tornRecord
    /// A record's checksum does not match its bytes.
    ///
    /// ```swift
    /// damage.reason == .checksumMismatch
    /// ```
    case checksumMismatch
    /// A record's length is impossible (shorter than its sequence number,
    /// or longer than the journal's record limit).
    ///
    /// ```swift
    /// if case .absurdLength(let length) = damage.reason { print(length) }
    /// ```
    case absurdLength(UInt32)
    /// A record or a segment does not carry the sequence number that
    /// follows the previous one.
    ///
    /// ```swift
    /// if case .sequenceGap(let expected, let found) = damage.reason { print(expected, found) }
    /// ```
    case sequenceGap(expected: UInt64, found: UInt64)
    /// A file's header is short or fails its checksum.
    ///
    /// ```swift
    /// damage.reason == .damagedHeader
    /// ```
    case damagedHeader
    /// A segment that comes after damage: its records cannot follow the
    /// recovered ones, so it is moved aside whole.
    ///
    /// ```swift
    /// damage.reason == .followsDamage
    /// ```
    case followsDamage
    /// A snapshot that does not read back whole (recovery fell back to an
    /// older one, or to the first record).
    ///
    /// ```swift
    /// damage.reason == .damagedSnapshot
    /// ```
    case damagedSnapshot
    /// A file's header is in another format version. Recovery throws
    /// ``JournalError/unsupportedFormat(path:version:)`` instead; a
    /// read-only walk (the inspector) reports it.
    ///
    /// ```swift
    /// if case .unsupportedFormat(let version) = reason { print(version) }
    /// ```
    case unsupportedFormat(UInt16)
    /// A file's header carries another sequence than its name. Recovery
    /// reports it as ``damagedHeader``; a read-only walk says which.
    ///
    /// ```swift
    /// if case .headerSequence(let named, let found) = reason { print(named, found) }
    /// ```
    case headerSequence(named: UInt64, found: UInt64)
    /// A file's header names other types or another schema than the
    /// journal's first file. Recovery throws
    /// ``JournalError/incompatible(path:expected:found:)`` instead.
    ///
    /// ```swift
    /// if case .identityDiffers(let expected, let found) = reason { print(expected, found) }
    /// ```
    case identityDiffers(expected: JournalIdentity, found: JournalIdentity)
    /// The oldest segment starts after the record that follows the newest
    /// snapshot. Recovery throws
    /// ``JournalError/missingRecords(after:path:damagedSnapshots:)`` instead.
    ///
    /// ```swift
    /// if case .missingRecords(let after) = reason { print("lost after", after) }
    /// ```
    case missingRecords(after: UInt64)
    /// The directory holds no segment and no snapshot (a read-only walk;
    /// recovery starts a new journal there).
    ///
    /// ```swift
    /// reason == .notAJournal
    /// ```
    case notAJournal
    /// No segment starts after the newest snapshot, which holds the
    /// sequence given, though the last one starts at or before it: the
    /// writer makes that segment as it writes the snapshot (a read-only walk).
    ///
    /// ```swift
    /// if case .missingSegment(let after) = reason { print(after) }
    /// ```
    case missingSegment(after: UInt64)
    /// Files listed vanished before they were opened, at every one of
    /// `attempts` listings: a live writer rotating them faster than a
    /// read-only walk reads them.
    ///
    /// ```swift
    /// if case .changing(let attempts) = reason { print(attempts) }
    /// ```
    case changing(attempts: Int)
  }

  /// The damaged file, as it was named in the journal.
  ///
  /// ```swift
  /// print(damage.path)  // orders.journal/segment-00000000000000000001.log
  /// ```
  public var path: String
  /// Where the damaged part started in that file; the file now ends there.
  ///
  /// ```swift
  /// print(damage.offset)  // 4123
  /// ```
  public var offset: Int
  /// How many bytes were moved aside.
  ///
  /// ```swift
  /// print(damage.byteCount)  // 17
  /// ```
  public var byteCount: Int
  /// Why.
  ///
  /// ```swift
  /// print(damage.reason)  // tornRecord
  /// ```
  public var reason: Reason
  /// The sibling file that now holds exactly the bytes moved aside.
  ///
  /// ```swift
  /// print(damage.asidePath)  // orders.journal/segment-00000000000000000001.log.aside-at-4123
  /// ```
  public var asidePath: String

  /// A damage report (tests build expected values with it).
  ///
  /// ```swift
  /// let damage = JournalDamage(path: "j/segment-1.log", offset: 90, byteCount: 5, reason: .tornRecord, asidePath: "j/segment-1.log.aside-at-90")
  /// ```
  public init(path: String, offset: Int, byteCount: Int, reason: Reason, asidePath: String) {
    self.path = path
    self.offset = offset
    self.byteCount = byteCount
    self.reason = reason
    self.asidePath = asidePath
  }

  /// One line for a log.
  ///
  /// ```swift
  /// print(damage)  // journal damage: j/segment-….log at offset 90, 5 bytes (tornRecord), moved to j/…aside-at-90
  /// ```
  public var description: String {
    "journal damage: \(logSafe(path)) at offset \(offset), \(byteCount) bytes (\(reason)), moved to \(logSafe(asidePath))"
  }
}
