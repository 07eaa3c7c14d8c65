import AsyncCore
import AsyncCoreTesting
import Testing

/// What holds once a shutdown has begun or returned.
@Suite("Shutdown guarantees", .hangDetector)
struct ShutdownTests {
  // MARK: - Handles are finished once shutdown(.immediate) returns

  enum PingAction: Sendable {
    /// Starts an effect that hands its `Send` to a `Task {}` calling it in a
    /// loop, then sleeps an hour.
    case start
    /// Starts an effect that sleeps an hour.
    case sleep
    case ping
  }

  @Test("after shutdown(.immediate) returns, every EffectHandle is finished, even while a stale Send is called")
  func handlesAreFinishedAfterImmediateShutdown() async throws {
    let clock = ManualClock()
    let stopSending = Gate()
    defer { stopSending.open() }  // never leave the sending task spinning
    let sending = Signal<Void>()
    let sender = Box<Task<Void, Never>?>(nil)
    let core = Core<Int, PingAction>(initialState: 0, clock: clock) { pings, action in
      switch action {
      case .start:
        return .run { send in
          sender.set(
            Task {
              var isFirst = true
              while !stopSending.isOpen {
                _ = await send(.ping)
                if isFirst { sending.emit() }
                isFirst = false
                // A stale send never suspends: let the test's own tasks have this thread too.
                await Task.yield()
              }
            })
          try await send.clock.sleep(for: .seconds(3_600))
        }
      case .sleep:
        return .run { send in try await send.clock.sleep(for: .seconds(3_600)) }
      case .ping:
        pings += 1
        return .none
      }
    }
    let sleepers = try await core.dispatch(contentsOf: [.sleep, .sleep])
    let handle = try await core.dispatch(.start)
    try #require(await sending.next() != nil)
    try await clock.waitForSleepers(atLeast: 3)
    await core.shutdown(.immediate)

    // Sampled while the task keeps calling its effect's (now stale) `Send`.
    var unfinished = 0
    for _ in 0..<100_000 where !handle.isFinished || !sleepers.isFinished {
      unfinished += 1
    }
    stopSending.open()
    await sender.value?.value
    #expect(unfinished == 0)
    #expect(clock.sleeperCount == 0)
    try await handle.finish()
    try await sleepers.finish()
  }

  // MARK: - hasShutDown and refusal agree for every task

  @Test("once a task saw hasShutDown, send returns .shutDown and dispatch throws for it (5,000 rounds)")
  func refusalFollowsHasShutDown() async throws {
    // The window is narrow (a task sees the flag in the instant a shutdown
    // sets it), so rounds are many: a fixed number, not a time budget,
    // so that a loaded machine checks as much as an idle one.
    var roundsThatSawTheFlag = 0
    var violations = 0
    for _ in 0..<5_000 {
      let core = makeCounterCore()
      let bothReady = Barrier(parties: 2)
      let accepted = await withTaskGroup(of: Int?.self) { group in
        group.addTask {
          await bothReady.arriveAndWait()
          await core.shutdown()
          return nil
        }
        group.addTask {
          await bothReady.arriveAndWait()
          // Spin until this task sees the flag, then act at once.
          var spins = 0
          while !core.hasShutDown && spins < 100_000 {
            spins += 1
            if spins.isMultiple(of: 10_000) { await Task.yield() }  // the other task may share this thread
          }
          guard core.hasShutDown else { return nil }
          var accepted = core.send(.increment) == .accepted ? 1 : 0
          do {
            try await core.dispatch(.increment)
            accepted += 1
          } catch {}
          return accepted
        }
        var accepted: Int?
        for await result in group where result != nil { accepted = result }
        return accepted
      }
      guard let accepted else { continue }
      roundsThatSawTheFlag += 1
      violations += accepted
    }
    #expect(roundsThatSawTheFlag > 0, "no round saw the flag: nothing was checked")
    #expect(violations == 0, "\(roundsThatSawTheFlag) of 5,000 rounds saw the flag")
  }
}
