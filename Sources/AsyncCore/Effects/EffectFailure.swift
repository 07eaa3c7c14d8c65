#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a core's diagnostics handler receives: an error thrown by an effect
/// that had no `catch:` handler, an effect the core refused to start, an
/// action for a child that is no longer in the state (its ``error`` is then a
/// ``ChildNotFound``), an action an effect sent after it ended or was
/// cancelled (its ``error`` is then a ``RefusedSend``, reported once per
/// effect), or two elements of a `forEach`'s collection with one id (a
/// ``DuplicateID``).
///
/// An effect that a reducer returns once ``Core/shutdown(_:)`` with
/// `.immediate` has begun is not started; it is reported with
/// ``CoreError/shutDown`` as its error (``isRefusal`` is `true`), at the
/// place the effect was made.
///
/// ```swift
/// let core = Core(initialState: App(), diagnostics: { failure in
///   logger.error("\(failure)")
/// }, reducer: reduceApp)
/// ```
public struct EffectFailure: Sendable, CustomStringConvertible {
  /// What the effect threw.
  ///
  /// ```swift
  /// let core = Core(initialState: App(), diagnostics: { failure in
  ///   if failure.error is NetworkError { metrics.networkFailures += 1 }
  /// }, reducer: reduceApp)
  /// ```
  public let error: any Error
  /// The file where the effect was made (`.run`'s `#fileID`).
  ///
  /// ```swift
  /// logger.error("\(failure.error) in the effect made at \(failure.fileID):\(failure.line)")
  /// ```
  public let fileID: StaticString
  /// The line where the effect was made.
  ///
  /// ```swift
  /// logger.error("\(failure.error) in the effect made at \(failure.fileID):\(failure.line)")
  /// ```
  public let line: UInt

  /// Whether the effect never ran: the core refused it while shutting down
  /// (its ``error`` is then ``CoreError/shutDown``). An effect that ran and
  /// threw that error itself is not a refusal.
  ///
  /// ```swift
  /// let core = Core(initialState: App(), diagnostics: { failure in
  ///   guard !failure.isRefusal else { return }   // shutting down: expected
  ///   logger.error("\(failure)")
  /// }, reducer: reduceApp)
  /// ```
  public let isRefusal: Bool

  /// A failure of an effect that ran and threw `error`.
  ///
  /// ```swift
  /// diagnostics(EffectFailure(error: error, fileID: #fileID, line: #line))
  /// ```
  public init(error: any Error, fileID: StaticString, line: UInt) {
    self.init(error: error, fileID: fileID, line: line, isRefusal: false)
  }

  private init(error: any Error, fileID: StaticString, line: UInt, isRefusal: Bool) {
    self.error = error
    self.fileID = fileID
    self.line = line
    self.isRefusal = isRefusal
  }

  /// An effect refused by a core that is shutting down.
  init(refusedAt fileID: StaticString, line: UInt) {
    self.init(error: CoreError.shutDown, fileID: fileID, line: line, isRefusal: true)
  }

  /// One line for a log, starting with `AsyncCore:` and naming where the
  /// effect was made. Text that comes from the error or an action is
  /// escaped and cut (at 500 bytes for an error's description), so a
  /// failure is one bounded line.
  ///
  /// ```swift
  /// print(failure)
  /// // AsyncCore: the effect started at App/Feed.swift:42 threw timedOut and has no catch handler
  /// ```
  public var description: String {
    if isRefusal {
      return "AsyncCore: the effect made at \(fileID):\(line) was not started: the core is shutting down"
    }
    if let missing = error as? ChildNotFound {
      return "AsyncCore: \(missing) (the child placed at \(fileID):\(line))"
    }
    if let refused = error as? RefusedSend {
      return "AsyncCore: \(refused) (the effect made at \(fileID):\(line))"
    }
    if let duplicate = error as? DuplicateID {
      return "AsyncCore: \(duplicate) (the forEach at \(fileID):\(line))"
    }
    let thrown = logSafe(String(describing: error), quoted: false, limit: 500)
    return "AsyncCore: the effect started at \(fileID):\(line) threw \(thrown) and has no catch handler"
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
