import AsyncCoreProcessTestSupport
import AsyncCoreTesting
import Testing

@testable import AsyncCore

/// Recording a core's actions and replaying them: what a recording holds,
/// from every place it is asked for, and what a replay does and does not
/// do.
@Suite("Record and replay", .hangDetector)
struct RecorderTests {
  /// A counter whose `.load` starts an effect that sends `.loaded` back,
  /// and whose `.double` sends `.add` synchronously.
  enum Step: Sendable, Equatable {
    case add(Int)
    case double
    case load
    case loaded(Int)
  }

  static func reducer(started: Events<Step>) -> Reduce<Int, Step> {
    Reduce { state, action in
      switch action {
      case .add(let amount):
        state += amount
        return .none
      case .double:
        return .send(.add(state))
      case .load:
        return .run { send in
          started.record(.load)
          await send(.loaded(7))
        }
      case .loaded(let value):
        state += value
        return .none
      }
    }
  }

  static func makeCore(
    _ initialState: Int = 0, clock: any Clock<Duration> = ContinuousClock(), started: Events<Step> = Events()
  ) -> Core<Int, Step> {
    Core(initialState: initialState, clock: clock, reducer: reducer(started: started))
  }

  // MARK: - What a recording holds

  @Test("a recording holds every action reduced before the call, sent ones included, with times by the core's clock")
  func holdsEveryActionWithItsTime() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(5, clock: clock)
    try await core.dispatch(.add(1))  // before recording: not in it
    let recorder = await core.record()
    try await core.dispatch(.add(2))
    await clock.advance(by: .milliseconds(1_500))
    core.send(.add(3))  // accepted, not reduced yet: recording() reduces it first
    let recording = await recorder.recording()
    #expect(
      recording
        == Recording(
          initialState: 6,
          entries: [.init(action: .add(2), time: .zero), .init(action: .add(3), time: .milliseconds(1_500))],
          finalState: 11))
  }

  @Test("the follow-ups effects send are recorded where they were reduced")
  func followUpsAreRecorded() async throws {
    let core = Self.makeCore(1)
    let recorder = await core.record()
    try await core.dispatch(.double)
    try await core.dispatch(.load).finish()
    #expect(await recorder.recording().actions == [.double, .add(1), .load, .loaded(7)])
    #expect(await recorder.recording().finalState == 9)
  }

  @Test("past the limit the oldest actions fall out and the initial state is the one before the oldest kept")
  func limitKeepsTheNewest() async throws {
    let core = Self.makeCore()
    let recorder = await core.record(last: 3)
    for amount in 1...10 { try await core.dispatch(.add(amount)) }
    let recording = await recorder.recording()
    #expect(recording.actions == [.add(8), .add(9), .add(10)])
    #expect(recording.initialState == (1...7).reduce(0, +))
    #expect(recording.finalState == 55)
  }

  @Test("a limit of 1 keeps the newest action and the state before it")
  func limitOne() async throws {
    let core = Self.makeCore()
    let recorder = await core.record(last: 1)
    try await core.dispatch(contentsOf: [.add(1), .add(2), .add(3)])
    let recording = await recorder.recording()
    #expect(recording.actions == [.add(3)])
    #expect((recording.initialState, recording.finalState) == (3, 6))
  }

  @Test("with no action recorded, both states are the state when recording started")
  func emptyRecording() async throws {
    let core = Self.makeCore(4)
    let recorder = await core.record()
    #expect(await recorder.recording() == Recording(initialState: 4, entries: [], finalState: 4))
  }

  @Test("two recorders at once each hold what was reduced since each started")
  func twoRecorders() async throws {
    let core = Self.makeCore()
    let first = await core.record()
    try await core.dispatch(contentsOf: [.add(1), .add(2)])
    let second = await core.record()
    try await core.dispatch(.add(3))
    #expect(await first.recording().actions == [.add(1), .add(2), .add(3)])
    let recording = await second.recording()
    #expect(recording.actions == [.add(3)])
    #expect((recording.initialState, recording.finalState) == (3, 6))
  }

  @Test("many senders: the recording holds each action exactly once, in the order the core reduced them")
  func nothingLostOrDuplicated() async throws {
    let core = Core<[Int], Int>(initialState: [], reducer: Reduce { state, action in state.append(action) })
    let recorder = await core.record(last: 10_000)
    await withDiscardingTaskGroup { group in
      for sender in 0..<4 {
        group.addTask {
          for index in 0..<500 { core.send(sender * 1_000 + index) }
        }
      }
    }
    let recording = await recorder.recording()
    #expect(recording.actions == recording.finalState)
    #expect(recording.actions.count == 2_000)
    #expect(recording.initialState == [])
  }

  // MARK: - From every place

  @Test("recording() from inside an effect holds the action that started it")
  func fromAnEffect() async throws {
    let holder = Locked<Recorder<Int, Int>?>(nil)
    let seen = Events<[Int]>()
    let core = Core<Int, Int>(initialState: 0) { state, action in
      state += action
      guard action == 1 else { return .none }
      return .run { _ in
        guard let recorder = holder.withLock({ $0 }) else { return }
        seen.record(await recorder.recording().actions)
      }
    }
    let recorder = await core.record()
    holder.withLock { $0 = recorder }
    try await core.dispatch(1).finish()
    #expect(seen.all == [[1]])
    holder.withLock { $0 = nil }
  }

  @Test("recording() from an observer's loop holds every action behind the state it observed")
  func fromAnObserver() async throws {
    let core = Self.makeCore()
    let recorder = await core.record()
    let states = await core.states(buffering: .all)
    let observer = Task { () -> Recording<Int, Step>? in
      for await state in states where state == 6 {
        return await recorder.recording()
      }
      return nil
    }
    for amount in 1...3 { try await core.dispatch(.add(amount)) }
    let recording = try #require(await observer.value)
    #expect(recording.actions == [.add(1), .add(2), .add(3)])
    #expect(recording.finalState == 6)
  }

  @Test(
    "after shutdown a recorder returns what it held; one made after shutdown holds the final state and nothing else")
  func afterShutdown() async throws {
    let core = Self.makeCore()
    let recorder = await core.record()
    try await core.dispatch(.add(2))
    await core.shutdown()
    #expect(await recorder.recording().actions == [.add(2)])
    let late = await core.record()
    #expect(await late.recording() == Recording(initialState: 2, entries: [], finalState: 2))
  }

  @Test("cancel(): later actions are not kept, what was held stays")
  func cancelKeepsWhatItHeld() async throws {
    let core = Self.makeCore()
    let recorder = await core.record()
    try await core.dispatch(.add(1))
    recorder.cancel()
    try await core.dispatch(.add(2))
    let recording = await recorder.recording()
    #expect(recording.actions == [.add(1)])
    #expect((recording.initialState, recording.finalState) == (0, 1))
  }

  @Test("a recorder released early is dropped by its core at the next action, with what it held")
  func releasedRecorderIsDropped() async throws {
    let core = Self.makeCore()
    weak var storage: RecorderStorage<Int, Step>?
    do {
      let recorder = await core.record()
      storage = recorder.storage
      try await core.dispatch(.add(1))
    }
    try await core.dispatch(.add(2))
    #expect(storage == nil)  // the core's list held it
  }

  @Test("a recorder does not keep its core alive, and answers once the core is gone")
  func outlivesItsCore() async throws {
    weak var weakCore: Core<Int, Step>?
    let recorder: Recorder<Int, Step>
    do {
      let core = Self.makeCore()
      weakCore = core
      recorder = await core.record()
      try await core.dispatch(.add(4))
    }
    #expect(weakCore == nil)
    #expect(await recorder.recording().actions == [.add(4)])
  }

  // MARK: - Replay

  @Test("replay reduces the actions in order and starts no effect, .send ones included")
  func replayStartsNoEffect() async throws {
    let started = Events<Step>()
    let core = Self.makeCore(1, started: started)
    try await core.replay(actions: [.load, .double, .add(5)])
    try await core.waitUntilIdle()
    #expect(await core.state == 6)  // .double's .send(.add(1)) dropped too
    #expect(started.all.isEmpty)
  }

  @Test("observers see a replay as usual: the action log each action, a latest-value subscriber each slice")
  func replayIsPublished() async throws {
    let core = Self.makeCore()
    let log = await core.actions()
    let published = Events<Int>()
    let subscriber = await core.subscribe(to: { $0 }, { published.record($0) })
    try await core.replay(actions: [.add(1), .add(2)])
    await core.shutdown()
    let records = await collect(log).value
    #expect(records.map(\.action) == [.add(1), .add(2)])
    #expect(records.map(\.stateAfter) == [1, 3])
    #expect(published.all == [0, 3])
    withExtendedLifetime(subscriber) {}
  }

  @Test("a long replay is reduced in slices, published after each, with what was sent meanwhile between them")
  func replayIsSliced() async throws {
    let slice = Core<Int, Step>.drainSlice
    let core = Self.makeCore()
    let published = Events<Int>()
    let subscriber = await core.subscribe(
      to: { $0 },
      { state in
        published.record(state)
        if state == slice { core.send(.add(1_000_000)) }
      })
    let recorder = await core.record(last: 3 * slice)
    try await core.replay(actions: Array(repeating: Step.add(1), count: 2 * slice + 1))
    #expect(published.all == [0, slice, slice + 1_000_000, 2 * slice + 1_000_000, 2 * slice + 1_000_001])
    let actions = await recorder.recording().actions
    #expect(actions.count == 2 * slice + 2)
    #expect(actions[slice] == .add(1_000_000))
    withExtendedLifetime(subscriber) {}
  }

  @Test("replay throws shutDown once the core has shut down, and reduces nothing")
  func replayAfterShutdown() async throws {
    let core = Self.makeCore(3)
    await core.shutdown()
    await #expect(throws: CoreError.shutDown) { try await core.replay(actions: [.add(1)]) }
    #expect(await core.state == 3)
  }

  @Test("replay throws shutDown when a shutdown begins between two slices: the slices before stay reduced")
  func replayInterruptedByShutdown() async throws {
    let slice = Core<Int, Step>.drainSlice
    let core = Self.makeCore()
    let lifecycle = await core.lifecycle
    let subscriber = await core.subscribe(
      to: { $0 },
      { state in
        // What `shutdown()` does first, before it reaches the core: the
        // replay sees the gates closed once it has yielded after this slice.
        if state == slice { _ = lifecycle.shutdown(.graceful) }
      })
    await #expect(throws: CoreError.shutDown) {
      try await core.replay(actions: Array(repeating: Step.add(1), count: 2 * slice + 1))
    }
    await core.shutdown()
    #expect(await core.state == slice)
    withExtendedLifetime(subscriber) {}
  }

  @Test("replay does not throw when its task is cancelled: it reduces every action")
  func replayIgnoresCancellation() async throws {
    let slice = Core<Int, Step>.drainSlice
    let core = Self.makeCore()
    let replay = Task { try await core.replay(actions: Array(repeating: Step.add(1), count: 2 * slice + 1)) }
    replay.cancel()
    try await replay.value
    #expect(await core.state == 2 * slice + 1)
  }

  @Test("replaying a recorded session into a fresh core reproduces its state and its action log")
  func replayReproduces() async throws {
    var generator = SplitMix64(seed: 23)
    for _ in 0..<20 {
      let core = Self.makeCore(Int(generator.next() % 10))
      let recorder = await core.record(last: 50)
      for _ in 0..<Int(generator.next() % 80) {
        switch generator.next() % 3 {
        case 0: try await core.dispatch(.add(Int(generator.next() % 5)))
        case 1: try await core.dispatch(.double)
        default: try await core.dispatch(.load).finish()
        }
      }
      let recording = await recorder.recording()
      let replayed = Self.makeCore(recording.initialState)
      let again = await replayed.record(last: 50)
      try await replayed.replay(recording)
      #expect(await replayed.state == recording.finalState)
      #expect(await again.recording().actions == recording.actions)
    }
  }
}
