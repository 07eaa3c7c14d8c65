#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// An error thrown by an effect that had no `catch:` handler, as given to a
/// core's diagnostics handler.
///
/// ```swift
/// let core = Core(initialState: App(), diagnostics: { failure in
///   logger.error("\(failure)")
/// }, reducer: reduceApp)
/// ```
public struct EffectFailure: Sendable, CustomStringConvertible {
  /// What the effect threw.
  public let error: any Error
  /// The file where the effect was made (`.run`'s `#fileID`).
  public let fileID: StaticString
  /// The line where the effect was made.
  public let line: UInt

  public init(error: any Error, fileID: StaticString, line: UInt) {
    self.error = error
    self.fileID = fileID
    self.line = line
  }

  public var description: String {
    "AsyncCore: the effect started at \(fileID):\(line) threw \(error) and has no catch handler"
  }

  /// The default diagnostics handler: writes the failure to standard error.
  @Sendable
  public static func writeToStandardError(_ failure: EffectFailure) {
    let message = failure.description + "\n"
    _ = message.utf8CString.withUnsafeBufferPointer { buffer in
      write(2, buffer.baseAddress, buffer.count - 1)
    }
  }
}
