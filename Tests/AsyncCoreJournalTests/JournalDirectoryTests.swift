import AsyncCoreJournal
import Foundation
import Testing

@Suite("A journal whose directory is removed or replaced while open")
struct JournalDirectoryTests {
  /// The calls that reach the disk.
  enum Call: CaseIterable, Sendable {
    case append, sync, writeSnapshot

    func run(on journal: Journal) throws(JournalError) {
      switch self {
      case .append: try journal.append([probeBody(3)])
      case .sync: try journal.sync()
      case .writeSnapshot: try journal.writeSnapshot(Tally.through(2).bytes, coveringThrough: 2)
      }
    }
  }

  @Test(
    "removed, then a new journal opened at its path: the first refuses every call and never writes into the new one",
    arguments: Call.allCases)
  func removedDirectoryRefuses(firstCall: Call) throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (first, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .operatingSystem)
    try first.append([probeBody(1), probeBody(2)])
    try FileManager.default.removeItem(atPath: scratch.journal)
    let (second, _) = try Journal.open(
      directory: scratch.journal, identity: testIdentity, durability: .operatingSystem)
    try second.append([[0xB0]])

    let removed = JournalError.directoryRemoved(path: scratch.journal)
    // The first call finds it; every later one refuses too.
    for call in [firstCall] + Call.allCases.filter({ $0 != firstCall }) {
      #expect(throws: removed, "\(call)") { try call.run(on: first) }
    }
    first.close()
    #expect(names(in: scratch.journal) == ["segment-00000000000000000001.log"])

    second.close()
    let (_, recovered) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(
      try recovered.untimed
        == Recovered(snapshot: nil, records: [JournalRecord(sequence: 1, body: [0xB0])], damage: []))
  }

  @Test("the segment being written deleted while open: the next append and sync refuse, and nothing is acknowledged")
  func removedSegmentRefuses() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try journal.append([probeBody(1)])
    let segment = scratch.journal + "/segment-00000000000000000001.log"
    try FileManager.default.removeItem(atPath: segment)

    let removed = JournalError.segmentRemoved(path: segment)
    #expect(throws: removed) { try journal.append([probeBody(2)]) }
    #expect(throws: removed) { try journal.sync() }
    #expect(throws: removed) { try journal.append([probeBody(3)]) }
    #expect(String(describing: removed).contains("was removed while open"))
    journal.close()
  }

  @Test("moved aside and replaced: the next append refuses and is not kept; the snapshot goes nowhere")
  func movedDirectoryRefuses() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (first, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try first.append([probeBody(1)])
    let moved = scratch.path + "/moved"
    try FileManager.default.moveItem(atPath: scratch.journal, toPath: moved)
    let (second, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)

    let removed = JournalError.directoryRemoved(path: scratch.journal)
    #expect(throws: removed) { try first.append([probeBody(2)]) }
    #expect(throws: removed) { try first.writeSnapshot(Tally.through(1).bytes, coveringThrough: 1) }
    first.close()
    second.close()
    #expect(names(in: scratch.journal) == ["segment-00000000000000000001.log"])
    #expect(names(in: moved) == ["segment-00000000000000000001.log"])
    // The moved journal holds what was acknowledged, not the refused record.
    let (_, recovered) = try Journal.open(directory: moved, identity: testIdentity, durability: .everyAction)
    #expect(try recovered.allRecords().map(\.sequence) == [1])
    #expect(recovered.damage == [])
  }

  @Test("the error names the path and says nothing more is written")
  func directoryRemovedDescription() {
    #expect(
      JournalError.directoryRemoved(path: "j").description
        == #"the journal's directory "j" was removed, moved or replaced while open: nothing more is written"#)
  }
}
