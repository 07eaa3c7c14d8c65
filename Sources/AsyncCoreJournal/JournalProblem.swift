import AsyncCore

/// A problem ``JournalReader`` found: the file, the offset in it, and why.
package struct JournalProblem: Equatable, Sendable, CustomStringConvertible {
  package enum Reason: Equatable, Sendable {
    /// A segment's record (or the segment itself, at offset 0) is damaged
    /// or out of sequence, as recovery would report it.
    case record(JournalDamage.Reason)
    /// The header is short, fails its checksum, or is of the other kind.
    case damagedHeader
    /// The header is of another format version.
    case unsupportedFormat(UInt16)
    /// The header's sequence is not the one in the file's name.
    case headerSequence(named: UInt64, found: UInt64)
    /// The header names other types or another schema than the journal's first file.
    case identityDiffers(expected: JournalIdentity, found: JournalIdentity)
    /// A snapshot whose state does not read back whole.
    case damagedSnapshot
    /// The oldest segment starts after the record that follows the newest snapshot.
    case missingRecords(after: UInt64)
    /// The directory holds no segment and no snapshot.
    case notAJournal
    /// No segment starts after the newest snapshot, which holds the
    /// sequence given, though the last one starts at or before it: the
    /// writer makes that segment as it writes the snapshot.
    case missingSegment(after: UInt64)
    /// Files listed vanished before they were opened, at every one of
    /// `attempts` listings: a live writer rotating them faster than they
    /// are read.
    case changing(attempts: Int)
  }

  package var path: String
  package var offset: Int
  package var reason: Reason

  package init(path: String, offset: Int, reason: Reason) {
    self.path = path
    self.offset = offset
    self.reason = reason
  }

  package var description: String {
    let what =
      switch reason {
      case .record(.tornRecord): "the file ends inside a record (a write that did not finish)"
      case .record(.checksumMismatch): "a record's checksum does not match its bytes"
      case .record(.absurdLength(let length)): "a record's length, \(length), is impossible"
      case .record(.sequenceGap(let expected, let found)): "expected record \(expected), found \(found)"
      case .record(let other): "\(other)"
      case .damagedHeader: "the header is damaged or not a journal header"
      case .unsupportedFormat(let version):
        "journal format \(version), which this version (format \(JournalFormat.version)) does not read"
      case .headerSequence(let named, let found): "the header says sequence \(found), the name \(named)"
      case .identityDiffers(let expected, let found): "written for \(found), not \(expected) as the first file"
      case .damagedSnapshot: "the snapshot does not read back whole"
      case .missingRecords(let after): "records after \(after) are missing"
      case .notAJournal: "not a journal: no segment-….log or snapshot-….snap file"
      case .missingSegment(let after):
        "missing: the writer makes it with snapshot \(after), so the records after \(after) are lost "
          + "(unless it stopped in between)"
      case .changing(let attempts):
        "the journal changed under the read \(attempts) times in a row (a core writing it removes files it "
          + "rotates): read it again, or once its core has stopped"
      }
    return "\(logSafe(path)) at offset \(offset): \(what)"
  }
}
