import AsyncCore
import Dispatch
import Synchronization

/// A journaled core's side of the disk: encodes what the core hands it and
/// calls the journal on one serial queue, so the `fdatasync` blocks that
/// queue's thread, never the core nor the cooperative pool, and the order
/// of calls is the order of records. The core awaits each append before the
/// next, and hands snapshots between them, so the queue holds at most one
/// append and one snapshot at a time.
final class JournalWriter<State: Sendable & Codable, Action: Sendable & Codable>: Sendable {
  let journal: Journal
  let codec: any JournalCodec
  let durability: JournalDurability
  let diagnostics: @Sendable (EffectFailure) -> Void
  let queue = DispatchQueue(label: "AsyncCoreJournal.writer")
  /// The task that syncs on the interval (for that policy), until closed.
  let syncTimer = Mutex<Task<Void, Never>?>(nil)

  init(
    journal: Journal, codec: any JournalCodec, durability: JournalDurability,
    diagnostics: @escaping @Sendable (EffectFailure) -> Void
  ) {
    self.journal = journal
    self.codec = codec
    self.durability = durability
    self.diagnostics = diagnostics
  }

  /// The hook the core calls.
  func hook(snapshotEvery: Int) -> CoreJournalHook<State, Action> {
    CoreJournalHook(
      snapshotEvery: snapshotEvery,
      append: { actions in try await self.append(actions) },
      snapshot: { state in self.queue.async { self.writeSnapshot(state) } },
      notJournaled: { action, error in
        self.report(.notJournaled(action: action, error: JournaledCoreError.from(error)))
      })
  }

  /// Encodes `actions` and appends the encodable ones in one call (one
  /// write, and one `fdatasync` under the every-action policy); returns
  /// those the codec refused. Throws the journal's error if none was written.
  func append(_ actions: [Action]) async throws -> [(index: Int, error: any Error)] {
    try await withCheckedThrowingContinuation { continuation in
      queue.async {
        var bodies: [[UInt8]] = []
        bodies.reserveCapacity(actions.count)
        var refused: [(index: Int, error: any Error)] = []
        let limit = self.journal.maximumRecordBytes
        for (index, action) in actions.enumerated() {
          do {
            let body = try self.codec.encode(action)
            // Refused alone, before the batch is written: one record over
            // the limit would fail the whole append.
            guard body.count <= limit else {
              refused.append((index, JournaledCoreError.journal(.recordTooLarge(bytes: body.count, limit: limit))))
              continue
            }
            bodies.append(body)
          } catch {
            refused.append((index, JournaledCoreError.encodingFailed(description: JournaledCoreError.bounded(error))))
          }
        }
        do {
          try self.journal.append(bodies)
          continuation.resume(returning: refused)
        } catch {
          continuation.resume(throwing: error)
          return
        }
        // Under the interval policy, a busy journal syncs as soon as the
        // interval has passed, not only at the timer's next turn.
        do throws(JournalError) {
          try self.journal.syncIfDue()
        } catch {
          self.report(.syncFailed(error))
        }
      }
    }
  }

  /// On the queue: the state after every record appended so far, as a
  /// snapshot covering through the last of them.
  func writeSnapshot(_ state: State) {
    let next = journal.nextSequence
    guard next > 0 else { return }
    do {
      let bytes: [UInt8]
      do {
        bytes = try codec.encode(state)
      } catch {
        throw JournaledCoreError.encodingFailed(description: JournaledCoreError.bounded(error))
      }
      try journal.writeSnapshot(bytes, coveringThrough: next - 1)
    } catch {
      report(.snapshotFailed(.from(error)))
    }
  }

  /// Syncs on the queue, after every append handed to it before.
  func sync() async throws(JournaledCoreError) {
    let result: Result<Void, JournalError> = await withCheckedContinuation { continuation in
      queue.async { continuation.resume(returning: Result { () throws(JournalError) in try self.journal.sync() }) }
    }
    do {
      try result.get()
    } catch {
      throw .journal(error)
    }
  }

  /// Syncs and closes the journal, after everything handed to the queue;
  /// a failed sync is reported.
  func close() async {
    stopSyncTimer()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      queue.async {
        do throws(JournalError) {
          try self.journal.sync()
        } catch .closed {
        } catch {
          self.report(.syncFailed(error))
        }
        self.journal.close()
        continuation.resume()
      }
    }
  }

  /// Under ``JournalDurability/interval(_:)``: a task that syncs each
  /// interval while records are unsynced (the journal runs no timer).
  func startSyncTimer() {
    guard case .interval(let interval) = durability else { return }
    // At most an hour at a time: the sync is done when due anyway, and a
    // huge interval ("never on a timer") must not overflow the sleep.
    let nap = min(interval, .seconds(3_600))
    let task = Task { [weak self] in
      while !Task.isCancelled {
        try? await Task.sleep(for: nap)
        guard let self else { return }
        // Waits for its turn on the queue: one sync at a time, never a
        // backlog of them behind a slow disk.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
          self.queue.async {
            do throws(JournalError) {
              try self.journal.syncIfDue()
            } catch .closed {
            } catch {
              self.report(.syncFailed(error))
            }
            done.resume()
          }
        }
      }
    }
    syncTimer.withLock { $0 = task }
  }

  func stopSyncTimer() {
    syncTimer.withLock { $0 }?.cancel()
  }

  func report(_ diagnostic: JournalDiagnostic) {
    diagnostics(EffectFailure(error: diagnostic, fileID: #fileID, line: #line))
  }
}
