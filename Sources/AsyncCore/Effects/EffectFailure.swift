#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a core's diagnostics handler receives: an error thrown by an effect
/// that had no `catch:` handler, or one of the core's own reports, a
/// ``CoreDiagnostic``: an action for a child that is no longer in the
/// state, two elements of a `forEach`'s collection with one id, an action an
/// effect sent after it ended or was cancelled (reported once per effect,
/// and once per `.run` of a `.concatenate`),
/// or an effect the core did not start because ``Core/shutdown(_:)`` with
/// `.immediate` had begun. ``fileID`` and ``line`` say where.
///
/// ```swift
/// let core = Core(initialState: App(), diagnostics: { failure in
///   logger.error("\(failure)")
/// }, reducer: reduceApp)
/// ```
public struct EffectFailure: Sendable, CustomStringConvertible {
  /// What the effect threw, or the ``CoreDiagnostic`` the core reports.
  ///
  /// ```swift
  /// let core = Core(initialState: App(), diagnostics: { failure in
  ///   if failure.error is NetworkError { metrics.networkFailures += 1 }
  /// }, reducer: reduceApp)
  /// ```
  public let error: any Error
  /// The file where the effect was made (`.run`'s `#fileID`); for a
  /// ``CoreDiagnostic/childNotFound(child:action:)`` or
  /// ``CoreDiagnostic/duplicateID(id:collection:)``, where the child or the
  /// `forEach` was placed.
  ///
  /// ```swift
  /// logger.error("\(failure.error) in the effect made at \(failure.fileID):\(failure.line)")
  /// ```
  public let fileID: StaticString
  /// The line where the effect was made (or the child placed, as
  /// ``fileID``).
  ///
  /// ```swift
  /// logger.error("\(failure.error) in the effect made at \(failure.fileID):\(failure.line)")
  /// ```
  public let line: UInt

  /// A failure with `error` at the place `fileID`, `line`: what the core
  /// hands its handler, for testing a handler of your own.
  ///
  /// ```swift
  /// diagnostics(EffectFailure(error: error, fileID: #fileID, line: #line))
  /// ```
  public init(error: any Error, fileID: StaticString, line: UInt) {
    self.error = error
    self.fileID = fileID
    self.line = line
  }

  /// One line for a log, starting with `AsyncCore:` and naming where the
  /// effect was made. Text that comes from the error or an action is
  /// escaped and cut (at 500 bytes for an error's description), so a
  /// failure is one bounded line.
  ///
  /// ```swift
  /// print(failure)
  /// // AsyncCore: the effect started at App/Feed.swift:42 threw, and has no catch handler: timedOut
  /// ```
  public var description: String {
    let place = "\(fileID):\(line)"
    if let report = error as? any DiagnosticLine { return report.diagnosticLine }
    guard let diagnostic = error as? CoreDiagnostic else {
      let thrown = logSafe(String(describing: error), quoted: false, limit: 500)
      return "AsyncCore: the effect started at \(place) threw, and has no catch handler: \(thrown)"
    }
    switch diagnostic {
    case .childNotFound: return "AsyncCore: \(diagnostic) (the child placed at \(place))"
    case .duplicateID: return "AsyncCore: \(diagnostic) (the forEach at \(place))"
    case .sendRefused: return "AsyncCore: \(diagnostic) (the effect made at \(place))"
    case .effectRefused: return "AsyncCore: the effect made at \(place) was not started: the core is shutting down"
    case .notJournaled, .journalFailed, .snapshotFailed, .syncFailed, .activationFailed, .notActivated,
      .passivationFailed:
      return "AsyncCore: \(diagnostic)"
    }
  }

  /// The default diagnostics handler: writes the failure to standard error.
  ///
  /// ```swift
  /// let core = Core(initialState: App(), diagnostics: { failure in
  ///   crashReporter.record(failure.error)
  ///   EffectFailure.writeToStandardError(failure)   // and still print it
  /// }, reducer: reduceApp)
  /// ```
  @Sendable
  public static func writeToStandardError(_ failure: EffectFailure) {
    let message = failure.description + "\n"
    _ = message.utf8CString.withUnsafeBufferPointer { buffer in
      write(2, buffer.baseAddress, buffer.count - 1)
    }
  }
}

/// A report another module of this package hands the diagnostics handler
/// as an ``EffectFailure``'s error, which says itself what happened (the
/// journal's reports: no effect is involved). Not API.
package protocol DiagnosticLine: Error {
  /// The whole line, starting with the module's name, bounded.
  var diagnosticLine: String { get }
}
