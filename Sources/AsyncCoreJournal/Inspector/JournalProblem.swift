import AsyncCore

/// A problem ``JournalReader`` found: the file, the offset in it, and why,
/// in recovery's words (``JournalDamage/Reason``).
package struct JournalProblem: Equatable, Sendable, CustomStringConvertible {
  package var path: String
  package var offset: Int
  package var reason: JournalDamage.Reason

  package init(path: String, offset: Int, reason: JournalDamage.Reason) {
    self.path = path
    self.offset = offset
    self.reason = reason
  }

  package var description: String {
    let what =
      switch reason {
      case .tornRecord: "the file ends inside a record (a write that did not finish)"
      case .checksumMismatch: "a record's checksum does not match its bytes"
      case .absurdLength(let length): "a record's length, \(length), is impossible"
      case .sequenceGap(let expected, let found): "expected record \(expected), found \(found)"
      case .followsDamage: "\(reason)"
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
