import AsyncCore
import AsyncCoreTesting
import Testing

/// Which effects a cancel id reaches.
@Suite("Cancel ids and cancelInFlight", .hangDetector)
struct CancellationTests {
  // MARK: - Ids are equal only when type and value are

  /// An id equal in value to `1 as Int` but of another type.
  enum OtherID: String, CaseIterable, Sendable {
    case uint8, int32, int64, double

    var id: any Hashable & Sendable {
      switch self {
      case .uint8: 1 as UInt8
      case .int32: 1 as Int32
      case .int64: 1 as Int64
      case .double: 1.0 as Double
      }
    }
  }

  enum TimerAction: Sendable {
    /// A one-second timer marked `.cancellable(id: 1 as Int)`.
    case start
    case cancel(OtherID)
    case cancelInt
    /// An effect marked with the other id and `cancelInFlight: true`.
    case startInFlight(OtherID)
    case fired
  }

  static func makeTimer(clock: ManualClock) -> Core<[String], TimerAction> {
    Core(initialState: [], clock: clock) { log, action in
      switch action {
      case .start:
        return .run { send in
          try await send.clock.sleep(for: .seconds(1))
          await send(.fired)
        }
        .cancellable(id: 1 as Int)
      case .cancel(let other):
        return .cancel(id: other.id)
      case .cancelInt:
        return .cancel(id: 1 as Int)
      case .startInFlight(let other):
        return .run { _ in }.cancellable(id: other.id, cancelInFlight: true)
      case .fired:
        log.append("fired")
        return .none
      }
    }
  }

  @Test("an id of another type but an equal value cancels nothing", arguments: OtherID.allCases)
  func idsOfAnotherTypeAreDifferent(other: OtherID) async throws {
    let clock = ManualClock()
    let core = Self.makeTimer(clock: clock)
    let timer = try await core.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.cancel(other))
    try await core.dispatch(.startInFlight(other)).finish()
    #expect(clock.sleeperCount == 1)  // cancellation is synchronous: a cancelled timer has left already
    await clock.advance(by: .seconds(1))
    try await timer.finish()
    #expect(await core.state == ["fired"])

    // The same type and value does cancel.
    let second = try await core.dispatch(.start)
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.cancelInt)
    #expect(clock.sleeperCount == 0)
    try await second.finish()
    #expect(await core.state == ["fired"])
  }

  // MARK: - cancelInFlight never cancels the effect it is nested in

  enum Wrapping: String, CaseIterable, Sendable {
    /// `.cancellable(id: X, cancelInFlight: true)` twice on the same effect.
    case direct
    /// Once by a child feature, once more by its parent after `.map`.
    case throughMap
  }

  enum ChildAction: Sendable {
    case done(Int)
  }

  enum SearchAction: Sendable {
    case start(Int)
    case done(Int)
  }

  struct Started: Sendable, Equatable {
    var attempt: Int
    var isCancelled: Bool
  }

  struct SearchID: Hashable, Sendable {}

  static func makeSearch(
    clock: ManualClock,
    wrapping: Wrapping,
    starts: Events<Started>,
    started: Signal<Started>
  ) -> Core<[Int], SearchAction> {
    Core(initialState: [], clock: clock) { done, action in
      switch action {
      case .start(let attempt):
        let child = Effect<ChildAction>.run { send in
          let start = Started(attempt: attempt, isCancelled: Task.isCancelled)
          starts.record(start)
          started.emit(start)
          try await send.clock.sleep(for: .seconds(1))
          await send(.done(attempt))
        }
        switch wrapping {
        case .direct:
          return child.map { .done(attemptOf($0)) }
            .cancellable(id: SearchID(), cancelInFlight: true)
            .cancellable(id: SearchID(), cancelInFlight: true)
        case .throughMap:
          let fromChild = child.cancellable(id: SearchID(), cancelInFlight: true)
          return fromChild.map { .done(attemptOf($0)) }.cancellable(id: SearchID(), cancelInFlight: true)
        }
      case .done(let attempt):
        done.append(attempt)
        return .none
      }
    }
  }

  private static func attemptOf(_ action: ChildAction) -> Int {
    switch action {
    case .done(let attempt): attempt
    }
  }

  @Test(
    "an effect wrapped twice in cancellable(cancelInFlight: true) runs exactly once; a newer one cancels it",
    arguments: Wrapping.allCases
  )
  func doublyWrappedEffectRunsOnce(wrapping: Wrapping) async throws {
    let clock = ManualClock()
    let starts = Events<Started>()
    let started = Signal<Started>()
    let core = Self.makeSearch(clock: clock, wrapping: wrapping, starts: starts, started: started)
    try await core.dispatch(.start(1))
    // Not cancelled by its own wrapper (required before waiting on the clock,
    // which a cancelled effect never sleeps on).
    try #require(await started.next() == Started(attempt: 1, isCancelled: false))
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.start(2))  // cancels attempt 1, synchronously
    #expect(clock.sleeperCount == 0)
    try #require(await started.next() == Started(attempt: 2, isCancelled: false))
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state == [2])
    #expect(clock.sleeperCount == 0)
    // Each attempt ran exactly once.
    #expect(starts.all == [Started(attempt: 1, isCancelled: false), Started(attempt: 2, isCancelled: false)])
  }

  // Found by probing: nested ids are marked when the reducer returns the
  // effect, and nested `cancelInFlight`s happen in reducing order.

  enum NestedAction: Sendable, Equatable {
    case go(Int)
    case stop
    case done(Int)
  }

  enum Nesting: String, CaseIterable, Sendable {
    case twice, mergedInside, throughMap
  }

  static func nested(_ work: Effect<NestedAction>, _ nesting: Nesting) -> Effect<NestedAction> {
    switch nesting {
    case .twice: work.cancellable(id: "inner").cancellable(id: "outer")
    case .mergedInside: Effect.merge([work.cancellable(id: "inner"), .run { _ in }]).cancellable(id: "outer")
    case .throughMap: work.cancellable(id: "inner").map { $0 }.cancellable(id: "outer")
    }
  }

  @Test("cancel(id:) of an inner id reaches a nested effect before it starts", arguments: Nesting.allCases)
  func innerIDCancelsBeforeStart(nesting: Nesting) async throws {
    let clock = ManualClock()
    let core = Core<[Int], NestedAction>(initialState: [], clock: clock) { done, action in
      switch action {
      case .go(let n):
        return Self.nested(
          .run { send in
            try await send.clock.sleep(for: .seconds(1))
            await send(.done(n))
          }, nesting)
      case .stop:
        return .cancel(id: "inner")
      case .done(let n):
        done.append(n)
        return .none
      }
    }
    // Both in one hop: the effect is cancelled before any runner takes it.
    try await core.dispatch(contentsOf: [.go(1), .stop]).finish()
    #expect(clock.sleeperCount == 0)
    #expect(await core.state == [])
  }

  @Test("an inner cancelInFlight under an outer id keeps only the newest, in reducing order (100 runs)")
  func innerCancelInFlightIsOrdered() async throws {
    for _ in 0..<100 {
      let clock = ManualClock()
      let core = Core<[Int], NestedAction>(initialState: [], clock: clock) { done, action in
        switch action {
        case .go(let n):
          return Effect.run { send in
            try await send.clock.sleep(for: .seconds(1))
            await send(.done(n))
          }
          .cancellable(id: "search", cancelInFlight: true)
          .cancellable(id: "feature")
        case .stop:
          return .none
        case .done(let n):
          done.append(n)
          return .none
        }
      }
      core.send(.go(1))
      core.send(.go(2))
      try await core.dispatch(.stop)  // both reduced: the first is cancelled
      try await clock.waitForSleepers(atLeast: 1)
      await clock.advance(by: .seconds(1))
      try await core.waitUntilIdle()
      #expect(await core.state == [2])
    }
  }
}
