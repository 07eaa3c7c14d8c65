import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension Journal {
  /// Writes `state`, the encoded state after the record `sequence`, as a
  /// snapshot, atomically, then rotates the log: later records go to a new
  /// segment, and files no longer needed are removed.
  ///
  /// ```swift
  /// let through = journal.nextSequence - 1
  /// try journal.writeSnapshot(try codec.encode(state), coveringThrough: through)
  /// ```
  ///
  /// The snapshot is written to a temporary file, synced, renamed into
  /// place, and the directory synced; the current segment is synced first,
  /// so no record the snapshot does not cover can be lost while an older
  /// one is on disk.
  ///
  /// - Important: Two snapshots are kept, the new one and the one before,
  ///   with the segments after the one before. A snapshot that does not
  ///   read back at the next open then falls back to the previous one and
  ///   its records, and the result is the same state. Older snapshots and
  ///   the segments they wholly cover are removed.
  /// - Precondition: `sequence` is a record already appended (or 0).
  /// - Throws: ``JournalError/writeFailed(path:errno:)``,
  ///   ``JournalError/fileSystem(operation:path:errno:)``,
  ///   ``JournalError/syncFailed(path:errno:)``,
  ///   ``JournalError/directoryRemoved(path:)`` (checked before anything
  ///   is written), ``JournalError/closed``.
  package func writeSnapshot(_ state: [UInt8], coveringThrough sequence: UInt64) throws(JournalError) {
    try self.state.withLock { journal -> Result<Void, JournalError> in
      journal.recordsAsRecovered = false
      if let failure = journal.failure { return .failure(failure) }
      if sequence >= journal.nextSequence {
        programmerError(
          "Journal.writeSnapshot: sequence \(sequence) was never appended (the next record is \(journal.nextSequence))")
      }
      if sequence < (journal.snapshots.last ?? 0) {
        programmerError(
          "Journal.writeSnapshot: sequence \(sequence) is older than the last snapshot's, \(journal.snapshots.last ?? 0)"
        )
      }
      do throws(JournalError) {
        try rotate(&journal, snapshot: state, sequence: sequence)
        return .success(())
      } catch {
        // A file error because the directory went meanwhile says so, and
        // refuses from then on as any call that finds it gone.
        guard let moved = directoryHandle.whereabouts() else { return .failure(error) }
        journal.failure = moved
        return .failure(moved)
      }
    }.get()
  }

  private func rotate(_ journal: inout JournalState, snapshot: [UInt8], sequence: UInt64) throws(JournalError) {
    try journal.sync(at: .now, in: directoryHandle).get()
    // A new segment for the records after this snapshot, unless the
    // current one holds none yet; made before the snapshot, so that a
    // reader beside the writer never sees the snapshot without it.
    let current = journal.segments.last ?? journal.nextSequence
    if current < journal.nextSequence {
      let next = journal.nextSequence
      let name = JournalFiles.segment(next)
      try directoryHandle.writeAtomically(
        JournalFormat.encode(.init(kind: .segment, identity: identity, sequence: next)), named: name)
      let descriptor = try directoryHandle.open(name, O_WRONLY)
      let end: Int
      do { end = try FileSystem.size(of: descriptor, path: directoryHandle.path(name)) } catch {
        systemClose(descriptor)
        throw error
      }
      systemClose(journal.segment)
      journal.segment = descriptor
      journal.segmentPath = directoryHandle.path(name)
      journal.end = end
      journal.segments.append(next)
    }

    var bytes = JournalFormat.encode(.init(kind: .snapshot, identity: identity, sequence: sequence))
    JournalFormat.appendFrame(
      sequence: sequence, time: FileSystem.wallClockNanoseconds(), body: snapshot, to: &bytes)
    try directoryHandle.writeAtomically(bytes, named: JournalFiles.snapshot(sequence))
    if journal.snapshots.last != sequence { journal.snapshots.append(sequence) }

    // Keep this snapshot and the one before; remove what only older ones needed.
    guard journal.snapshots.count >= 2 else { return }
    let previous = journal.snapshots[journal.snapshots.count - 2]
    for old in journal.snapshots.dropLast(2) {
      try directoryHandle.remove(JournalFiles.snapshot(old))
    }
    journal.snapshots.removeFirst(journal.snapshots.count - 2)
    // A segment is wholly covered when the next one starts at or before previous + 1.
    while journal.segments.count >= 2, journal.segments[1] <= previous + 1 {
      try directoryHandle.remove(JournalFiles.segment(journal.segments[0]))
      journal.segments.removeFirst()
    }
    try directoryHandle.sync()
  }
}
