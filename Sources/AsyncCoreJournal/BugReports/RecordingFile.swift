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
  /// The file is read to its end, up to 256 MiB (past it, `cannotRead`
  /// with `EFBIG`: an endless source is refused), so a pipe works as a file does
  /// (`/dev/stdin`). A journal's directory is not a recording: the
  /// inspector reads journals, and a durable `Core` recovers them.
  ///
  /// - Throws: ``RecordingFileError/cannotRead(path:errno:)`` when the file
  ///   cannot be opened or read (it does not exist: `ENOENT`; a directory:
  ///   `EISDIR`); ``RecordingFileError/notARecording(path:reason:)`` when it
  ///   is not a recording of these types: not JSON, cut short, another
  ///   `format` or `version`, an action or state these types do not
  ///   decode, or an entry's time that is not a whole number of
  ///   nanoseconds from 0, or is earlier than the entry before.
  public init(contentsOf path: String) throws(RecordingFileError) {
    let bytes: [UInt8]
    do {
      bytes = try WholeFile.read(path)
    } catch {
      throw .cannotRead(path: path, errno: error.errno)
    }
    let recording: Recording
    do {
      recording = try JSONDecoder().decode(Recording.self, from: Data(bytes))
    } catch let error as DecodingError {
      let reason = RecordingFileError.unreadableTime(in: bytes) ?? RecordingFileError.reason(error)
      throw .notARecording(path: path, reason: reason)
    } catch {
      throw .notARecording(path: path, reason: "\(error)")
    }
    if let problem = RecordingFileError.timeProblem(recording.entries.map(\.time)) {
      throw .notARecording(path: path, reason: problem)
    }
    self = recording
  }

  /// Writes the recording as one JSON document (keys sorted): in place of
  /// a file atomically, through a pipe or a device.
  ///
  /// ```swift
  /// let recorder = await core.record(last: 500)
  /// // … when something goes wrong:
  /// try await recorder.recording().write(to: "report.json")
  /// ```
  ///
  /// What `path` names decides how, as for the inspector's `html -o`:
  ///
  /// - nothing, or a regular file: the document goes to a new temporary
  ///   file beside it (`report.json.<random>.tmp`, made exclusively, so
  ///   never a file or a link that was there), which is synced, renamed
  ///   over `path`, and the directory synced. A reader finds the old file
  ///   or the whole new one, never a part; a replaced file's permissions
  ///   are kept. Writers of one path at once each succeed, and the file
  ///   is the last one's.
  /// - a link: the file it names is written that way, and the link stays.
  /// - a FIFO or a device: written through, never replaced (a FIFO's
  ///   write waits for its reader, and one whose reader leaves is `EPIPE`,
  ///   never a `SIGPIPE`; a full device is `ENOSPC`).
  /// - a socket: cannot be opened (`ENXIO`), and is left as it is.
  /// - a directory: ``RecordingFileError/cannotWrite(path:errno:)`` with
  ///   `EISDIR`.
  ///
  /// Only `Codable` state and actions can be written: for others this
  /// method does not exist (a compile error, never an empty file).
  ///
  /// - Throws: ``RecordingFileError/cannotWrite(path:errno:)`` when the
  ///   file cannot be written (the directory does not exist: `ENOENT`; a
  ///   full disk: `ENOSPC`), or ``RecordingFileError/cannotEncode(path:reason:)``
  ///   when the recording cannot be encoded (an action whose `encode(to:)`
  ///   throws, a state holding a `Double.nan`) or would not read back (an
  ///   entry's time before 0, or before the entry's before it). No
  ///   temporary file is left, and a file already at `path` is as it was.
  public func write(to path: String) throws(RecordingFileError) {
    let bytes: [UInt8]
    do {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
      bytes = Array(try encoder.encode(self))
    } catch {
      throw .cannotEncode(path: path, reason: "\(error)")
    }
    if let problem = RecordingFileError.timeProblem(entries.map(\.time)) {
      throw .cannotEncode(path: path, reason: problem)
    }
    do {
      try WholeFile.write(bytes, to: path)
    } catch {
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
      "cannot read the recording \(logSafe(path)): \(systemMessage(code))"
    case .cannotWrite(let path, let code):
      "cannot write the recording \(logSafe(path)): \(systemMessage(code))"
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

extension RecordingFileError {
  /// The first entry whose time is before 0 or before the entry's before
  /// it, said as ``reason(_:)`` says a place; `nil` when there is none.
  static func timeProblem(_ times: [Duration]) -> String? {
    func text(_ time: Duration) -> String {
      let (seconds, attoseconds) = time.components
      let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
      let (total, carried) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
      return overflow || carried ? "\(time)" : "\(total)"
    }
    for (index, time) in times.enumerated() {
      if time < .zero {
        return "at entries[\(index)].nanoseconds: \(text(time)) is before the recording started (times count from 0)"
      }
      if index > 0, time < times[index - 1] {
        return "at entries[\(index)].nanoseconds: \(text(time)) is earlier than the entry before "
          + "(\(text(times[index - 1])))"
      }
    }
    return nil
  }

  /// The first entry whose `nanoseconds` is a JSON number but no `Int64`
  /// (`1e300`, `1.5`), which the decoder reports as if the document were
  /// not JSON; `nil` when there is none, or `bytes` are no such document.
  static func unreadableTime(in bytes: [UInt8]) -> String? {
    struct Times: Decodable {
      struct Entry: Decodable { var nanoseconds: JSONValue? }
      var entries: [Entry]
    }
    guard let times = try? JSONDecoder().decode(Times.self, from: Data(bytes)) else { return nil }
    for (index, entry) in times.entries.enumerated() {
      if case .number(let number) = entry.nanoseconds {
        return "at entries[\(index)].nanoseconds: \(number) is not a whole number of nanoseconds that fits in 64 bits"
      }
    }
    return nil
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
