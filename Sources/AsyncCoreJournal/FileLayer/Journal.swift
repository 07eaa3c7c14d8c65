import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A durable, append-only journal of encoded actions, with snapshots, in a
/// directory of its own.
///
/// ```swift
/// import AsyncCoreJournal
///
/// let identity = JournalIdentity(action: OrderAction.self, state: Orders.self, schemaVersion: 1)
/// let (journal, recovered) = try Journal.open(directory: "orders.journal", identity: identity, durability: .everyAction)
/// let codec = JSONJournalCodec()
/// try journal.append([try codec.encode(OrderAction.placed(id: 7))])
/// ```
///
/// The directory holds segments (`segment-<first sequence>.log`: a header,
/// then records), snapshots (`snapshot-<sequence>.snap`), and whatever
/// recovery moved aside (`….aside-at-<offset>`). A directory rather than
/// one file: a snapshot replaces the records before it by removing whole
/// segments, with no copying and no rewriting of a file in place, and each
/// file is written by appending or created whole by a rename.
///
/// - Important: One process at a time: ``open(directory:identity:durability:maximumRecordBytes:)``
///   takes an advisory lock (`flock`) on the directory, which the second
///   opener finds held (``JournalError/locked(path:)``), and releases it at
///   ``close()`` or when the process ends, however it ends.
/// - Important: The journal keeps its directory open and reaches every
///   file through it, so it never writes into another directory put at
///   the same path. If its own is removed, moved or replaced while open,
///   the next ``append(_:)``, ``sync()`` or ``writeSnapshot(_:coveringThrough:)``
///   throws ``JournalError/directoryRemoved(path:)``, and so does every call
///   after it.
///
/// A `Journal` is `Sendable`: its calls are serialized by a lock, held
/// across their system calls, so records are appended in the order the
/// calls took it. ``sync()`` and ``syncIfDue(now:)`` release it while
/// `fdatasync` runs, so an append from another thread does not wait for
/// a sync it did not ask for.
package final class Journal: Sendable {
  /// The journal's directory, as given to ``open(directory:identity:durability:maximumRecordBytes:)``.
  ///
  /// ```swift
  /// print(journal.directory)  // orders.journal
  /// ```
  package let directory: String
  /// The types and schema version every file's header carries.
  ///
  /// ```swift
  /// print(journal.identity)  // Shop.OrderAction → Shop.Orders, schema 1
  /// ```
  package let identity: JournalIdentity
  /// The longest record body accepted, in bytes.
  ///
  /// ```swift
  /// print(journal.maximumRecordBytes)  // 16777216
  /// ```
  package let maximumRecordBytes: Int
  /// The directory, open: it carries the lock, every file is reached
  /// through it, and it is synced after a rename or a removal in it.
  let directoryHandle: JournalDirectory
  let state: Locked<JournalState>
  /// Called by ``sync()`` and ``syncIfDue(now:)`` once the lock is released,
  /// before `fdatasync`: where a test appends as another thread would.
  package let whileSyncing = Locked<(@Sendable () -> Void)?>(nil)

  init(identity: JournalIdentity, maximumRecordBytes: Int, directory: JournalDirectory, state: JournalState) {
    self.directory = directory.path
    self.identity = identity
    self.maximumRecordBytes = maximumRecordBytes
    self.directoryHandle = directory
    self.state = Locked(state)
  }

  deinit {
    close()
    systemClose(directoryHandle.descriptor)
  }

  /// The sequence number the next appended record gets (1 in a new journal).
  ///
  /// ```swift
  /// let sequences = try journal.append([body])
  /// // sequences == previousNext..<journal.nextSequence
  /// ```
  package var nextSequence: UInt64 {
    state.withLock { $0.nextSequence }
  }

  /// Appends `bodies` as consecutive records with one `write`, then, under
  /// ``JournalDurability/everyAction``, one `fdatasync`; returns their
  /// sequence numbers.
  ///
  /// The records carry the time of this call (``JournalRecord/time``, the
  /// system's real-time clock read once for the whole batch).
  ///
  /// ```swift
  /// let codec = JSONJournalCodec()
  /// let sequences = try journal.append(try actions.map { try codec.encode($0) })
  /// ```
  ///
  /// - Important: All or nothing. When the write or the sync fails, the
  ///   file is cut back to the end of its last whole record before this
  ///   throws: no record of the batch stays, not even part of one, and the
  ///   next append continues from there. Only when the cut itself fails is
  ///   the journal closed (every later call throws the first error).
  /// - Important: Before it returns, it checks that the journal's
  ///   directory is still at its path (one `stat`). When it was removed,
  ///   moved or replaced, this throws ``JournalError/directoryRemoved(path:)``
  ///   instead of returning, and so does every later call.
  /// - Throws: ``JournalError/writeFailed(path:errno:)``,
  ///   ``JournalError/syncFailed(path:errno:)``,
  ///   ``JournalError/recordTooLarge(bytes:limit:)`` (nothing written),
  ///   ``JournalError/directoryRemoved(path:)``, ``JournalError/closed``.
  @discardableResult
  package func append(_ bodies: [[UInt8]]) throws(JournalError) -> Range<UInt64> {
    for body in bodies where body.count > maximumRecordBytes {
      throw .recordTooLarge(bytes: body.count, limit: maximumRecordBytes)
    }
    return try state.withLock { state -> Result<Range<UInt64>, JournalError> in
      state.recordsAsRecovered = false
      if let failure = state.failure { return .failure(failure) }
      let first = state.nextSequence
      guard !bodies.isEmpty else { return .success(first..<first) }
      // One clock read for the whole batch, under the lock: the records of
      // one call share a time, and a later call's time is read after it.
      let time = FileSystem.wallClockNanoseconds()
      var bytes: [UInt8] = []
      bytes.reserveCapacity(
        bodies.reduce(0) { $0 + $1.count + JournalFormat.frameOverhead + JournalFormat.payloadPrefixBytes })
      for (index, body) in bodies.enumerated() {
        JournalFormat.appendFrame(sequence: first + UInt64(index), time: time, body: body, to: &bytes)
      }
      let (_, writeError) = FileSystem.write(state.segment, bytes, at: state.end)
      if writeError != 0 {
        return .failure(state.cutBack(.writeFailed(path: state.segmentPath, errno: writeError)))
      }
      let hadUnsynced = state.schedule.hasUnsyncedRecords
      if state.schedule.appended() {
        let syncError = FileSystem.syncData(state.segment)
        if syncError != 0 {
          state.schedule.writeUndone(hadUnsyncedRecords: hadUnsynced)
          return .failure(state.cutBack(.syncFailed(path: state.segmentPath, errno: syncError)))
        }
        state.schedule.synced(at: .now)
      }
      // After the write, so that a directory removed until now is seen:
      // the batch is then neither acknowledged nor kept.
      if let moved = directoryHandle.whereabouts() ?? state.segmentRemoval() {
        _ = state.cutBack(moved)
        state.failure = moved
        return .failure(moved)
      }
      state.end += bytes.count
      state.nextSequence += UInt64(bodies.count)
      return .success(first..<state.nextSequence)
    }.get()
  }

  /// Syncs the records appended since the last sync, whatever the policy
  /// (at shutdown, or before telling a peer something is durable).
  ///
  /// ```swift
  /// try journal.sync()
  /// ```
  ///
  /// - Throws: ``JournalError/syncFailed(path:errno:)``,
  ///   ``JournalError/directoryRemoved(path:)`` (checked before the
  ///   sync), ``JournalError/closed``.
  package func sync() throws(JournalError) {
    _ = try syncReleasingLock(at: .now, onlyIfDue: false).get()
  }

  /// Syncs when the policy is ``JournalDurability/interval(_:)``, records
  /// are unsynced and the interval has passed since the last sync; returns
  /// whether it synced. The caller drives it (from a timer of its own, or
  /// after each batch): the journal runs no timer.
  ///
  /// ```swift
  /// try journal.append(bodies)
  /// try journal.syncIfDue()
  /// ```
  ///
  /// - Throws: ``JournalError/syncFailed(path:errno:)``,
  ///   ``JournalError/directoryRemoved(path:)`` (when it syncs),
  ///   ``JournalError/closed``.
  @discardableResult
  package func syncIfDue(now: ContinuousClock.Instant = .now) throws(JournalError) -> Bool {
    try syncReleasingLock(at: now, onlyIfDue: true).get()
  }

  /// Syncs the segment with the lock released during the `fdatasync`, so
  /// that an append on another thread goes on meanwhile; whether it synced.
  ///
  /// Everything written before the lock is taken is covered: the sync
  /// starts after it. The schedule counts the journal synced only when no
  /// append came in meanwhile. A sync that fails cuts nothing back: what
  /// it was to cover had already been acknowledged, as when it held the
  /// lock. (The sync inside an ``JournalDurability/everyAction`` append
  /// keeps the lock: its batch is cut back when it fails, which a later
  /// batch written after it would make impossible.)
  private func syncReleasingLock(at now: ContinuousClock.Instant, onlyIfDue: Bool) -> Result<Bool, JournalError> {
    let begun = state.withLock { state -> Result<(descriptor: Int32, path: String, next: UInt64)?, JournalError> in
      if let failure = state.failure { return .failure(failure) }
      if onlyIfDue, !state.schedule.isDue(at: now) { return .success(nil) }
      if let moved = directoryHandle.whereabouts() ?? state.segmentRemoval() {
        state.failure = moved
        return .failure(moved)
      }
      // A descriptor of its own: a close or a rotation meanwhile closes the journal's.
      let copy = dup(state.segment)
      guard copy >= 0 else { return .failure(.fileSystem(operation: "dup", path: state.segmentPath, errno: errno)) }
      return .success((copy, state.segmentPath, state.nextSequence))
    }
    let started: (descriptor: Int32, path: String, next: UInt64)?
    switch begun {
    case .success(let value): started = value
    case .failure(let error): return .failure(error)
    }
    guard let started else { return .success(false) }
    whileSyncing.withLock { $0 }?()
    let error = FileSystem.syncData(started.descriptor)
    systemClose(started.descriptor)
    guard error == 0 else { return .failure(.syncFailed(path: started.path, errno: error)) }
    state.withLock { state in
      state.schedule.synced(at: now, appendedMeanwhile: state.nextSequence != started.next)
    }
    return .success(true)
  }

  /// Closes the files and releases the lock; later calls throw
  /// ``JournalError/closed``. Records appended and not synced stay in the
  /// operating system's cache (they survive the process, not a power loss).
  ///
  /// ```swift
  /// try journal.sync()
  /// journal.close()
  /// ```
  package func close() {
    let wasOpen = state.withLock { state in
      guard state.segment >= 0 else { return false }
      systemClose(state.segment)
      state.segment = -1
      if state.failure == nil { state.failure = .closed }
      return true
    }
    if wasOpen { flock(directoryHandle.descriptor, LOCK_UN) }
  }
}

/// What a journal changes as it goes, behind its lock.
struct JournalState: Sendable {
  /// The segment appended to, open for writing (-1 once closed).
  var segment: Int32
  var segmentPath: String
  /// Where the next record goes in it: the end of its last whole record.
  var end: Int
  var nextSequence: UInt64
  var schedule: SyncSchedule
  /// The first sequence of every segment in the directory, ascending; the
  /// last is the one appended to.
  var segments: [UInt64]
  /// The sequences of the snapshots in the directory that read back,
  /// ascending.
  var snapshots: [UInt64]
  /// Why the journal is unusable (closed, its directory gone, or a cut
  /// back that failed).
  var failure: JournalError?
  /// No append or snapshot since the open: the files still hold what
  /// recovery found, for ``JournalRecovery/readRecords(batch:_:)``.
  var recordsAsRecovered = true

  /// Cuts the segment back to `end` after a failed write or sync; returns
  /// `error`. When even that fails, the segment may keep part of a
  /// record: the journal refuses everything from then on, and recovery at
  /// the next open moves the part aside.
  mutating func cutBack(_ error: JournalError) -> JournalError {
    if (try? FileSystem.truncate(segment, to: end, path: segmentPath)) == nil {
      failure = error
    }
    return error
  }

  /// ``JournalError/segmentRemoved(path:)`` once the segment being
  /// written has no name left in the directory; `nil` otherwise. One `fstat`.
  func segmentRemoval() -> JournalError? {
    var info = stat()
    return fstat(segment, &info) == 0 && info.st_nlink == 0 ? .segmentRemoved(path: segmentPath) : nil
  }

  /// Syncs the segment, once `directory` is found still at its path.
  mutating func sync(at now: ContinuousClock.Instant, in directory: JournalDirectory) -> Result<Void, JournalError> {
    if let failure { return .failure(failure) }
    if let moved = directory.whereabouts() ?? segmentRemoval() {
      failure = moved
      return .failure(moved)
    }
    let error = FileSystem.syncData(segment)
    guard error == 0 else { return .failure(.syncFailed(path: segmentPath, errno: error)) }
    schedule.synced(at: now)
    return .success(())
  }
}
