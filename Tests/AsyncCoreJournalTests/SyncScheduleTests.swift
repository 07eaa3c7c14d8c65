import AsyncCoreJournal
import Testing

@Suite("Sync schedule")
struct SyncScheduleTests {
  let opened = ContinuousClock.now

  @Test("every action: each append syncs before it returns, and nothing is ever due later")
  func everyAction() {
    var schedule = SyncSchedule(durability: .everyAction, openedAt: opened)
    let syncs = schedule.appended()
    #expect(syncs)
    #expect(!schedule.isDue(at: opened + .seconds(3600)))
  }

  @Test("an interval: an append does not sync; a sync is due once the interval has passed since the last")
  func interval() {
    var schedule = SyncSchedule(durability: .interval(.milliseconds(50)), openedAt: opened)
    #expect(!schedule.isDue(at: opened + .seconds(1)))  // nothing appended
    let syncsAtOnce = schedule.appended()
    #expect(!syncsAtOnce)
    #expect(!schedule.isDue(at: opened + .milliseconds(49)))
    #expect(schedule.isDue(at: opened + .milliseconds(50)))
    schedule.synced(at: opened + .milliseconds(60))
    #expect(!schedule.isDue(at: opened + .milliseconds(200)))  // nothing new since
    _ = schedule.appended()
    #expect(!schedule.isDue(at: opened + .milliseconds(109)))
    #expect(schedule.isDue(at: opened + .milliseconds(110)))
  }

  @Test("left to the operating system: never synced")
  func operatingSystem() {
    var schedule = SyncSchedule(durability: .operatingSystem, openedAt: opened)
    let syncs = schedule.appended()
    #expect(!syncs)
    #expect(!schedule.isDue(at: opened + .seconds(3600)))
  }

  @Test("an undone write leaves the schedule as it was before it")
  func undoneWrite() {
    var schedule = SyncSchedule(durability: .interval(.milliseconds(50)), openedAt: opened)
    _ = schedule.appended()
    schedule.writeUndone(hadUnsyncedRecords: false)
    #expect(!schedule.hasUnsyncedRecords)
    #expect(!schedule.isDue(at: opened + .seconds(1)))
  }

  @Test("a sync that an append overtook: the interval restarts, and the append stays unsynced")
  func appendDuringSync() {
    var schedule = SyncSchedule(durability: .interval(.milliseconds(50)), openedAt: opened)
    _ = schedule.appended()
    schedule.synced(at: opened + .milliseconds(60), appendedMeanwhile: true)
    #expect(schedule.hasUnsyncedRecords)
    #expect(!schedule.isDue(at: opened + .milliseconds(109)))
    #expect(schedule.isDue(at: opened + .milliseconds(110)))
    schedule.synced(at: opened + .milliseconds(120), appendedMeanwhile: false)
    #expect(!schedule.hasUnsyncedRecords)
  }
}
