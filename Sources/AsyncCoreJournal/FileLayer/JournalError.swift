import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why a journal operation failed: each case says what to do about it.
///
/// ```swift
/// do {
///   let (journal, recovered) = try Journal.open(directory: path, identity: identity, durability: .everyAction)
/// } catch .locked(let path) {
///   print("another process holds \(path)")
/// } catch {
///   print(error)
/// }
/// ```
public enum JournalError: Error, Sendable, Hashable {
  /// Another process (or another `Journal` in this one) has the journal
  /// open: its advisory lock on `path` is held.
  ///
  /// ```swift
  /// catch .locked(let path) { print("in use: \(path)") }
  /// ```
  case locked(path: String)
  /// The journal at `path` was written for other types or another schema
  /// version. Nothing was changed: migrate it, or open another directory.
  ///
  /// ```swift
  /// catch .incompatible(let path, let expected, let found) { print(path, expected, found) }
  /// ```
  case incompatible(path: String, expected: JournalIdentity, found: JournalIdentity)
  /// The file at `path` has a format version this library does not read.
  /// Nothing was changed.
  ///
  /// ```swift
  /// catch .unsupportedFormat(let path, let version) { print(path, version) }
  /// ```
  case unsupportedFormat(path: String, version: Int)
  /// Records between the newest readable snapshot and the first segment
  /// are gone: the state cannot be rebuilt exactly. The snapshots that
  /// covered them and did not read back were moved aside, as any damage
  /// is, and are listed in `damagedSnapshots` (empty when none was there);
  /// nothing else was changed.
  ///
  /// ```swift
  /// catch .missingRecords(let after, let path, let damagedSnapshots) {
  ///   print("no record after \(after) before \(path)")
  ///   for damage in damagedSnapshots { print("damaged, moved to \(damage.asidePath)") }
  /// }
  /// ```
  case missingRecords(after: UInt64, path: String, damagedSnapshots: [JournalDamage])
  /// Writing records failed (`EFBIG`: over the file-size limit, `ENOSPC`:
  /// disk full, `EIO`). The file was cut back to its last whole record: the
  /// batch is not in the journal, and the journal stays usable.
  ///
  /// ```swift
  /// catch .writeFailed(let path, let errno) where errno == ENOSPC { print("disk full: \(path)") }
  /// ```
  case writeFailed(path: String, errno: Int32)
  /// `fdatasync` failed. The batch was cut off the file, as for
  /// ``writeFailed(path:errno:)``.
  ///
  /// ```swift
  /// catch .syncFailed(let path, let errno) { print(path, errno) }
  /// ```
  case syncFailed(path: String, errno: Int32)
  /// Another system call failed: `operation` on `path`, with `errno`.
  ///
  /// ```swift
  /// catch .fileSystem(let operation, let path, let errno) { print(operation, path, errno) }
  /// ```
  case fileSystem(operation: String, path: String, errno: Int32)
  /// A record is longer than the journal's limit (`maximumRecordBytes`).
  ///
  /// ```swift
  /// catch .recordTooLarge(let bytes, let limit) { print(bytes, limit) }
  /// ```
  case recordTooLarge(bytes: Int, limit: Int)
  /// The journal's directory is no longer at `path`: it was removed
  /// (`rm -rf`), moved or replaced while the journal was open. The call
  /// that found it, and every later one, refuses: nothing more is written,
  /// not even into a directory now at `path` (another journal's). Records
  /// acknowledged before went with the directory. Open the journal again
  /// where its directory is.
  ///
  /// ```swift
  /// catch .directoryRemoved(let path) { print("the journal's directory \(path) is gone") }
  /// ```
  case directoryRemoved(path: String)
  /// The segment being written, at `path`, was removed while the journal
  /// was open: what it held is gone, and what would follow could not be
  /// recovered. The call that found it, and every later one, refuses.
  ///
  /// ```swift
  /// catch .segmentRemoved(let path) { print("\(path) was deleted under the journal") }
  /// ```
  case segmentRemoved(path: String)
  /// A file the journal checked when it opened no longer holds, at
  /// `offset`, the records it held then (replaced, cut, or changed by
  /// something other than the journal), found while recovery read them.
  /// No record was skipped: open the journal again to recover what is
  /// there now.
  ///
  /// ```swift
  /// catch .changedSinceOpen(let path, let offset) { print("\(path) changed at \(offset)") }
  /// ```
  case changedSinceOpen(path: String, offset: Int)
  /// The journal was closed, or could not cut a failed write back (the
  /// error that broke it came first); open it again to recover.
  ///
  /// ```swift
  /// catch .closed { reopen() }
  /// ```
  case closed

  /// The codec could not encode an action or the state; the action was
  /// not journaled (and so not reduced), or the snapshot not written.
  ///
  /// ```swift
  /// if case .encodingFailed(let description) = error { print(description) }
  /// ```
  case encodingFailed(description: String)

  /// A record's body could not be decoded as an action when the journal
  /// was recovered: a schema change without a new `schemaVersion`, say.
  ///
  /// ```swift
  /// if case .decodingFailed(let sequence, _) = error { print("record \(sequence)") }
  /// ```
  case decodingFailed(sequence: UInt64, description: String)

  /// The newest snapshot could not be decoded as the state.
  ///
  /// ```swift
  /// if case .snapshotDecodingFailed(let sequence, _) = error { print("snapshot \(sequence)") }
  /// ```
  case snapshotDecodingFailed(sequence: UInt64, description: String)
}

extension JournalError: CustomStringConvertible {
  /// One line saying what failed and where, with the system's words for an
  /// `errno`; paths are escaped, so the line stays one line.
  ///
  /// ```swift
  /// print(JournalError.writeFailed(path: "j/segment-1.log", errno: 27))
  /// // writing "j/segment-1.log" failed: File too large (errno 27)
  /// ```
  public var description: String {
    switch self {
    case .locked(let path):
      "the journal in \(logSafe(path)) is open in another process or core (its lock is held)"
    case .incompatible(let path, let expected, let found):
      "\(logSafe(path)) was written for \(logSafe(found.description)), not \(logSafe(expected.description))"
    case .unsupportedFormat(let path, let version):
      "\(logSafe(path)) is in journal format \(version), which this version does not read"
    case .missingRecords(let after, let path, let damagedSnapshots):
      "records after \(after) are missing: no snapshot or segment leads to \(logSafe(path))"
        + (damagedSnapshots.isEmpty
          ? ""
          : "; the damaged snapshots were moved aside: "
            + damagedSnapshots.map { "\(logSafe($0.path)) to \(logSafe($0.asidePath))" }.joined(separator: ", "))
    case .writeFailed(let path, let code):
      "writing \(logSafe(path)) failed: \(systemMessage(code))"
    case .syncFailed(let path, let code):
      "syncing \(logSafe(path)) failed: \(systemMessage(code))"
    case .fileSystem(let operation, let path, let code):
      "\(operation) \(logSafe(path)) failed: \(systemMessage(code))"
    case .recordTooLarge(let bytes, let limit):
      "a record of \(bytes) bytes is over the journal's limit of \(limit)"
    case .directoryRemoved(let path):
      "the journal's directory \(logSafe(path)) was removed, moved or replaced while open: nothing more is written"
    case .segmentRemoved(let path):
      "the journal's segment \(logSafe(path)) was removed while open: nothing more is written"
    case .changedSinceOpen(let path, let offset):
      "\(logSafe(path)) changed at offset \(offset) since the journal was opened: its records no longer read back"
    case .closed:
      "the journal is closed"
    case .encodingFailed(let description):
      "the codec could not encode it: \(description)"
    case .decodingFailed(let sequence, let description):
      "record \(sequence) could not be decoded: \(description)"
    case .snapshotDecodingFailed(let sequence, let description):
      "the snapshot through record \(sequence) could not be decoded: \(description)"
    }
  }
}
