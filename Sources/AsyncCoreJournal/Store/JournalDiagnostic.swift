import AsyncCore

/// What a ``FileJournal`` reports to its diagnostics handler, as the
/// `error` of the `EffectFailure` it hands it. (What the core reports about
/// its journal is a `CoreDiagnostic`.)
///
/// ```swift
/// let journal = try FileJournal<Tally, TallyAction>(directory: path, diagnostics: { failure in
///   if case JournalDiagnostic.damageMovedAside(let damage)? = failure.error as? JournalDiagnostic {
///     alert("journal damaged at \(damage.offset), moved to \(damage.asidePath)")
///   }
/// })
/// ```
public enum JournalDiagnostic: Error, Sendable, CustomStringConvertible {
  /// Opening found damage and moved it aside, never deleted: recovery
  /// stopped at the last whole record before it.
  ///
  /// ```swift
  /// if case .damageMovedAside(let damage) = diagnostic { print(damage.offset) }
  /// ```
  case damageMovedAside(JournalDamage)

  /// One line for a log, bounded.
  ///
  /// ```swift
  /// print(diagnostic)   // AsyncCoreJournal: damage moved aside: …
  /// ```
  public var description: String {
    switch self {
    case .damageMovedAside(let damage): "AsyncCoreJournal: damage moved aside: \(damage)"
    }
  }
}

extension JournalDiagnostic: DiagnosticLine {
  package var diagnosticLine: String { description }
}
