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

// A recording as a file: the bug report an app writes when something goes
// wrong, and the developer reads back to replay. One JSON document, keys
// sorted (as `JSONJournalCodec` writes them, so equal recordings are equal
// bytes) and indented, since people read it too.

extension Recording where State: Codable, Action: Codable {
  /// Reads a recording (a bug report) written by `write(to:)`.
  ///
  /// ```swift
  /// let report = try Recording<AppState, AppAction>(contentsOf: "report.json")
  /// let core = TestCore(initialState: report.initialState, reducer: appReducer)
  /// await core.replay(report)
  /// ```
  ///
  /// - Throws: ``RecordingFileError/cannotRead(path:errno:)`` when the file
  ///   cannot be opened or read (it does not exist: `ENOENT`);
  ///   ``RecordingFileError/notARecording(path:reason:)`` when it is not a
  ///   recording of these types: not JSON, cut short, another `format` or
  ///   `version`, or an action or state these types do not decode.
  public init(contentsOf path: String) throws(RecordingFileError) {
    let bytes: [UInt8]
    do {
      let descriptor = try FileSystem.open(path, O_RDONLY)
      defer { systemClose(descriptor) }
      bytes = try FileSystem.read(descriptor, path: path)
    } catch {
      throw .cannotRead(path: path, errno: error.errno)
    }
    do {
      self = try JSONDecoder().decode(Recording.self, from: Data(bytes))
    } catch let error as DecodingError {
      throw .notARecording(path: path, reason: RecordingFileError.reason(error))
    } catch {
      throw .notARecording(path: path, reason: "\(error)")
    }
  }

  /// Writes the recording as one JSON document (keys sorted), atomically (temporary file + rename).
  ///
  /// ```swift
  /// let recorder = await core.record(last: 500)
  /// // … when something goes wrong:
  /// try await recorder.recording().write(to: "report.json")
  /// ```
  ///
  /// The document is written to `path` + `.tmp` in the same directory,
  /// synced, renamed over `path`, and the directory synced: a reader finds
  /// the old file or the whole new one, never a part. Only `Codable` state
  /// and actions can be written: for others this method does not exist
  /// (a compile error, never an empty file).
  ///
  /// - Throws: ``RecordingFileError/cannotWrite(path:errno:)`` when the
  ///   file cannot be written (the directory does not exist: `ENOENT`; a
  ///   full disk: `ENOSPC`), or ``RecordingFileError/cannotEncode(path:reason:)``
  ///   when the recording cannot be encoded (an action whose `encode(to:)`
  ///   throws, a state holding a `Double.nan`). Nothing is left at
  ///   `path` + `.tmp`, and a file already at `path` is as it was.
  public func write(to path: String) throws(RecordingFileError) {
    let bytes: [UInt8]
    do {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
      bytes = Array(try encoder.encode(self))
    } catch {
      throw .cannotEncode(path: path, reason: "\(error)")
    }
    let slash = path.lastIndex(of: "/")
    let directoryPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    do {
      let directory = try FileSystem.open(directoryPath, O_RDONLY | O_DIRECTORY)
      defer { systemClose(directory) }
      try FileSystem.writeAtomically(bytes, to: path, directory: directory, directoryPath: directoryPath)
    } catch {
      try? FileSystem.remove(path + ".tmp")
      throw .cannotWrite(path: path, errno: error.errno)
    }
  }
}

/// Why a recording file could not be read or written; its
/// ``description`` is one line naming the file.
///
/// ```swift
/// do {
///   let report = try Recording<AppState, AppAction>(contentsOf: path)
///   print(report.actions.count)
/// } catch {
///   print(error)   // cannot read the recording "report.json": No such file or directory (errno 2)
/// }
/// ```
public enum RecordingFileError: Error, Equatable, CustomStringConvertible {
  /// The file could not be opened or read; `errno` says why (`ENOENT`:
  /// there is none).
  ///
  /// ```swift
  /// catch RecordingFileError.cannotRead(_, let code) where code == ENOENT { print("no report yet") }
  /// ```
  case cannotRead(path: String, errno: Int32)
  /// The file could not be written; `errno` says why.
  ///
  /// ```swift
  /// catch RecordingFileError.cannotWrite(_, let code) where code == ENOSPC { print("disk full") }
  /// ```
  case cannotWrite(path: String, errno: Int32)
  /// The recording could not be encoded as JSON (an action whose
  /// `encode(to:)` throws, a `Double.nan` in the state); nothing was written.
  ///
  /// ```swift
  /// catch RecordingFileError.cannotEncode(_, let reason) { print("not written:", reason) }
  /// ```
  case cannotEncode(path: String, reason: String)
  /// The file is not a recording these types read: another format, another
  /// version, bad or cut-short JSON, an unknown action. `reason` says which,
  /// and where in the document.
  ///
  /// ```swift
  /// catch RecordingFileError.notARecording(let path, let reason) { print(path, reason) }
  /// ```
  case notARecording(path: String, reason: String)

  /// One line: what failed, the path (quoted and escaped, see `logSafe`)
  /// and why.
  ///
  /// ```swift
  /// print(RecordingFileError.notARecording(path: "a.json", reason: "not valid JSON"))
  /// // "a.json" is not a recording: not valid JSON
  /// ```
  public var description: String {
    switch self {
    case .cannotRead(let path, let code):
      "cannot read the recording \(logSafe(path)): \(JournalError.systemMessage(code))"
    case .cannotWrite(let path, let code):
      "cannot write the recording \(logSafe(path)): \(JournalError.systemMessage(code))"
    case .notARecording(let path, let reason):
      "\(logSafe(path)) is not a recording: \(logSafe(reason, quoted: false, limit: 400))"
    case .cannotEncode(let path, let reason):
      "cannot write the recording \(logSafe(path)): it does not encode as JSON: "
        + logSafe(reason, quoted: false, limit: 400)
    }
  }

  /// What a decoding error says, where in the document: one line.
  static func reason(_ error: DecodingError) -> String {
    func place(_ path: [any CodingKey]) -> String {
      var text = ""
      for key in path {
        if let index = key.intValue {
          text += "[\(index)]"
        } else {
          text += (text.isEmpty ? "" : ".") + key.stringValue
        }
      }
      return text.isEmpty ? "" : "at \(text): "
    }
    switch error {
    case .dataCorrupted(let context) where context.codingPath.isEmpty:
      // What the JSON parser says: not JSON, or cut short.
      return "not valid JSON, or cut short" + (context.underlyingError.map { ": \($0)" } ?? "")
    case .dataCorrupted(let context):
      return place(context.codingPath) + context.debugDescription
    case .keyNotFound(let key, let context):
      return place(context.codingPath) + "no \"\(key.stringValue)\""
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
      return place(context.codingPath) + context.debugDescription
    @unknown default:
      return "\(error)"
    }
  }
}

extension Error {
  /// The `errno` in a file-system `JournalError`; `EIO` for any other.
  fileprivate var errno: Int32 {
    switch self as? JournalError {
    case .fileSystem(_, _, let code)?, .writeFailed(_, let code)?, .syncFailed(_, let code)?: code
    default: EIO
    }
  }
}
