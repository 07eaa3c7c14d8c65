import AsyncCore

/// Why a ``JournaledCore`` refused to open, or an action was not reduced.
///
/// ```swift
/// do {
///   try await orders.dispatch(.place(order))
/// } catch .journal(.writeFailed(_, let errno)) {
///   print("not placed: the disk refused it (errno \(errno))")
/// } catch {
///   print("not placed: \(error)")
/// }
/// ```
public enum JournaledCoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The core has shut down: what ``JournaledCore/dispatch(_:)``,
  /// ``JournaledCore/enqueue(_:)`` and ``JournaledCore/sync()`` throw from
  /// then on (the action was not accepted; the journal is closed).
  /// ``JournaledCore/send(_:)`` returns `SendResult.shutDown` instead.
  ///
  /// ```swift
  /// catch .shutDown { return }   // the service is stopping
  /// ```
  case shutDown
  /// The journal failed: opening it, or appending the action (then the
  /// action was not reduced, and the state still matches the journal).
  ///
  /// ```swift
  /// catch .journal(.locked(let path)) { print("another process holds \(path)") }
  /// ```
  case journal(JournalError)
  /// The codec could not encode the action: it was not journaled, and so
  /// not reduced. `description` is the codec's error, cut at 200 bytes.
  ///
  /// ```swift
  /// catch .encodingFailed(let why) { print("not journaled: \(why)") }
  /// ```
  case encodingFailed(description: String)
  /// On opening: the codec could not decode the snapshot or the record at
  /// `sequence`, written by this identity and schema version. Nothing was
  /// changed; the journal is left as it is. `description` is the codec's
  /// error, cut at 200 bytes.
  ///
  /// ```swift
  /// catch .decodingFailed(let sequence, _) { print("record \(sequence) does not decode") }
  /// ```
  case decodingFailed(sequence: UInt64, description: String)
  /// On opening: the codec could not decode the snapshot of the state
  /// covering the records through `sequence`. Nothing was changed.
  /// `description` is the codec's error, cut at 200 bytes.
  ///
  /// ```swift
  /// catch .snapshotDecodingFailed(let sequence, _) { print("the snapshot at \(sequence) does not decode") }
  /// ```
  case snapshotDecodingFailed(sequence: UInt64, description: String)

  /// One line naming what failed.
  ///
  /// ```swift
  /// print(JournaledCoreError.shutDown)   // AsyncCoreJournal: the core has shut down
  /// ```
  public var description: String {
    switch self {
    case .shutDown: "AsyncCoreJournal: the core has shut down"
    case .journal(let error): "AsyncCoreJournal: \(error)"
    case .encodingFailed(let description): "AsyncCoreJournal: the codec could not encode the action: \(description)"
    case .decodingFailed(let sequence, let description):
      "AsyncCoreJournal: the codec could not decode record \(sequence): \(description)"
    case .snapshotDecodingFailed(let sequence, let description):
      "AsyncCoreJournal: the codec could not decode the snapshot of the state through record \(sequence): \(description)"
    }
  }

  /// The error `error`, thrown by the core or the journal, as one of these.
  static func from(_ error: any Error) -> JournaledCoreError {
    switch error {
    case let error as JournaledCoreError: error
    case let error as JournalError: .journal(error)
    case CoreError.shutDown: .shutDown
    default: .encodingFailed(description: bounded(error))
    }
  }

  /// An error's description for a case above: escaped, cut at 200 bytes.
  static func bounded(_ error: any Error) -> String {
    logSafe(String(describing: error), quoted: false, limit: 200)
  }
}

/// What a ``JournaledCore`` reports to its diagnostics handler, as the
/// `error` of the `EffectFailure` it hands it.
///
/// ```swift
/// let core = try await JournaledCore(directory: path, initialState: Tally(), diagnostics: { failure in
///   if case JournalDiagnostic.damageMovedAside(let damage)? = failure.error as? JournalDiagnostic {
///     alert("journal damaged at \(damage.offset), moved to \(damage.asidePath)")
///   }
/// }, reducer: reduceTally)
/// ```
public enum JournalDiagnostic: Error, Sendable, CustomStringConvertible {
  /// Opening found damage and moved it aside, never deleted: recovery
  /// stopped at the last whole record before it.
  ///
  /// ```swift
  /// if case .damageMovedAside(let damage) = diagnostic { print(damage.offset) }
  /// ```
  case damageMovedAside(JournalDamage)
  /// An action nobody waited on (a `send`, an `enqueue`, an effect's
  /// follow-up) was not journaled, and so not reduced.
  ///
  /// ```swift
  /// if case .notJournaled(let action, let error) = diagnostic { print(action, error) }
  /// ```
  case notJournaled(action: any Sendable, error: JournaledCoreError)
  /// A snapshot was not written; the journal goes on, and recovery replays
  /// from the snapshot before it.
  ///
  /// ```swift
  /// if case .snapshotFailed(let error) = diagnostic { print(error) }
  /// ```
  case snapshotFailed(JournaledCoreError)
  /// A sync on the interval, or the last one at shutdown, failed: the
  /// records since the last sync may not be on disk.
  ///
  /// ```swift
  /// if case .syncFailed(let error) = diagnostic { print(error) }
  /// ```
  case syncFailed(JournalError)

  /// One line for a log, bounded; what comes from an action or an error is
  /// escaped and cut.
  ///
  /// ```swift
  /// print(JournalDiagnostic.syncFailed(.closed))
  /// ```
  public var description: String {
    switch self {
    case .damageMovedAside(let damage): "AsyncCoreJournal: damage moved aside: \(damage)"
    case .notJournaled(let action, let error):
      "AsyncCoreJournal: \(logSafe(String(describing: action), limit: 200)) was not journaled, so not reduced: \(error)"
    case .snapshotFailed(.encodingFailed(let description)):
      "AsyncCoreJournal: a snapshot was not written: the codec could not encode the state: \(description)"
    case .snapshotFailed(let error): "AsyncCoreJournal: a snapshot was not written: \(error)"
    case .syncFailed(let error): "AsyncCoreJournal: a sync on the interval or at shutdown failed: \(error)"
    }
  }
}

extension JournalDiagnostic: DiagnosticLine {
  package var diagnosticLine: String { description }
}
