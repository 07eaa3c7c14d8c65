/// When a journal syncs, as a pure state machine: what was appended since
/// the last sync, and under ``JournalDurability/interval(_:)`` when that was.
/// Each mutating call returns whether to sync now; the journal makes the
/// system call and reports it with ``synced(at:)``.
package struct SyncSchedule: Sendable {
  package let durability: JournalDurability
  /// Whether records were appended since the last sync.
  package private(set) var hasUnsyncedRecords = false
  /// When the last sync (or the open) happened.
  package private(set) var lastSync: ContinuousClock.Instant

  package init(durability: JournalDurability, openedAt now: ContinuousClock.Instant) {
    self.durability = durability
    self.lastSync = now
  }

  /// Records were written: whether to sync before `append` returns.
  package mutating func appended() -> Bool {
    hasUnsyncedRecords = true
    return durability == .everyAction
  }

  /// Whether a sync is due at `now`: only under an interval, with records
  /// unsynced, and the interval passed since the last.
  package func isDue(at now: ContinuousClock.Instant) -> Bool {
    guard hasUnsyncedRecords, case .interval(let interval) = durability else { return false }
    return now - lastSync >= interval
  }

  /// A sync (of everything written so far) finished at `now`.
  package mutating func synced(at now: ContinuousClock.Instant) {
    synced(at: now, appendedMeanwhile: false)
  }

  /// A sync that began at `now` finished; records appended while it ran
  /// (`appendedMeanwhile`) may not be in it, so they stay unsynced.
  package mutating func synced(at now: ContinuousClock.Instant, appendedMeanwhile: Bool) {
    if !appendedMeanwhile { hasUnsyncedRecords = false }
    lastSync = now
  }

  /// A failed write was cut back: nothing new to sync from it.
  package mutating func writeUndone(hadUnsyncedRecords: Bool) {
    hasUnsyncedRecords = hadUnsyncedRecords
  }
}
