import AsyncCore
import Testing

@testable import AsyncCoreTesting

/// The manual clock's state machine, one transition at a time: no task, no
/// core, no clock. Continuations are labels, so each test reads which
/// waiters a call hands back.
@Suite("ManualClock state machine")
struct ManualClockStateMachineTests {
  typealias Machine = ManualClockStateMachine<String, String, String>

  /// An effect as the clock sees it, without a core.
  final class FakeEffect: ObservedEffect {
    let startOrder: EffectObservation.StartOrder

    init(startOrder: UInt32 = 0) {
      self.startOrder = EffectObservation.StartOrder(startOrder)
    }

    func observeEnd(_ observer: @escaping @Sendable () -> Void) -> Bool { false }
  }

  /// A sleeper with a new id, labelled `sleeper <id>`.
  static func sleeper(
    _ machine: inout Machine, until seconds: Int, owner: FakeEffect? = nil, startOrder: UInt32? = nil
  ) -> Machine.Sleeper {
    let id = machine.makeID()
    return Machine.Sleeper(
      id: id, deadline: .seconds(seconds), owner: owner,
      startOrder: EffectObservation.StartOrder(startOrder ?? owner?.startOrder.rawValue ?? 0),
      continuation: "sleeper \(id)")
  }

  /// Parks `sleeper`, which must not be due; the waiters it wakes.
  static func park(_ machine: inout Machine, _ sleeper: Machine.Sleeper) -> Machine.WakeUps? {
    guard case .parked(let wakeUps) = machine.sleep(sleeper, isCancelled: false) else { return nil }
    return wakeUps
  }

  /// The id of the sleeper `action` wakes, its follower, and whether it
  /// asks to hear its effect's end; `nil` for `.done`.
  static func woken(_ action: Machine.WakeAction) -> (id: Int, follower: Int?, watch: Bool)? {
    guard case .wake(let sleeper, let follower, let watch) = action else { return nil }
    return (sleeper.id, follower, watch)
  }

  // MARK: Sleeping

  @Test("a sleep until a deadline already reached is answered at once and never parks")
  func dueSleep() {
    var machine = Machine()
    let sleeper = Self.sleeper(&machine, until: 0)
    guard case .resume(.success) = machine.sleep(sleeper, isCancelled: false) else {
      Issue.record("not resumed at once")
      return
    }
    #expect(machine.sleeperCount == 0)
  }

  @Test("a sleep of a cancelled task is refused with CancellationError")
  func cancelledSleep() {
    var machine = Machine()
    let sleeper = Self.sleeper(&machine, until: 1)
    guard case .resume(.failure(let error)) = machine.sleep(sleeper, isCancelled: true) else {
      Issue.record("not refused")
      return
    }
    #expect(error is CancellationError)
    #expect(machine.sleeperCount == 0)
  }

  @Test("a sleep parks, and answers the waits for as many sleepers as there are now")
  func parkedSleepAnswersCounts() {
    var machine = Machine()
    let (one, two) = (machine.makeID(), machine.makeID())
    #expect(machine.parkCountWaiter(one, count: 1, "one", isCancelled: false) == nil)
    #expect(machine.parkCountWaiter(two, count: 2, "two", isCancelled: false) == nil)
    let wakeUps = Self.park(&machine, Self.sleeper(&machine, until: 1))
    #expect(wakeUps?.counts == ["one"])
    #expect(wakeUps?.followers == [])
    #expect(machine.sleeperCount == 1)
  }

  @Test("cancelling a sleep removes the sleeper and hands back its continuation, once")
  func cancellingASleep() {
    var machine = Machine()
    let sleeper = Self.sleeper(&machine, until: 1)
    _ = Self.park(&machine, sleeper)
    #expect(machine.cancelSleep(sleeper.id) == "sleeper \(sleeper.id)")
    #expect(machine.sleeperCount == 0)
    #expect(machine.cancelSleep(sleeper.id) == nil)
  }

  // MARK: Waking

  @Test("the next sleeper is the first by rank among those due; time moves to its deadline, then to the target")
  func wakeInRankOrder() {
    var machine = Machine()
    let late = Self.sleeper(&machine, until: 3, startOrder: 1)
    let startedSecond = Self.sleeper(&machine, until: 1, startOrder: 2)
    let startedFirst = Self.sleeper(&machine, until: 1, startOrder: 1)
    for sleeper in [late, startedSecond, startedFirst] { _ = Self.park(&machine, sleeper) }

    #expect(Self.woken(machine.wakeNext(until: .seconds(2), following: false))?.id == startedFirst.id)
    #expect(machine.now == .seconds(1))
    #expect(Self.woken(machine.wakeNext(until: .seconds(2), following: false))?.id == startedSecond.id)
    #expect(Self.woken(machine.wakeNext(until: .seconds(2), following: false)) == nil)
    #expect(machine.now == .seconds(2))
    #expect(machine.sleeperCount == 1)
  }

  @Test("with no target, any sleeper is due; with none left, time stays where it is")
  func wakeEveryone() {
    var machine = Machine()
    let sleeper = Self.sleeper(&machine, until: 60)
    _ = Self.park(&machine, sleeper)
    #expect(Self.woken(machine.wakeNext(until: nil, following: false))?.id == sleeper.id)
    #expect(machine.now == .seconds(60))
    #expect(Self.woken(machine.wakeNext(until: nil, following: false)) == nil)
    #expect(machine.now == .seconds(60))
  }

  @Test("time never goes back: a target before now leaves it")
  func timeNeverGoesBack() {
    var machine = Machine()
    #expect(Self.woken(machine.wakeNext(until: .seconds(5), following: false)) == nil)
    #expect(Self.woken(machine.wakeNext(until: .seconds(2), following: false)) == nil)
    #expect(machine.now == .seconds(5))
  }

  @Test("a sleep that begins later on the clock's time wakes after one begun earlier for the same deadline")
  func sleptAtOrder() {
    var machine = Machine()
    let early = Self.sleeper(&machine, until: 4, startOrder: 9)
    _ = Self.park(&machine, early)
    #expect(Self.woken(machine.wakeNext(until: .seconds(2), following: false)) == nil)  // now 2 s
    let late = Self.sleeper(&machine, until: 4, startOrder: 1)
    _ = Self.park(&machine, late)
    #expect(Self.woken(machine.wakeNext(until: .seconds(4), following: false))?.id == early.id)
    #expect(Self.woken(machine.wakeNext(until: .seconds(4), following: false))?.id == late.id)
  }

  @Test("an advance that is not following registers no follower and asks for no effect's end")
  func wakeWithoutFollowing() {
    var machine = Machine()
    _ = Self.park(&machine, Self.sleeper(&machine, until: 1, owner: FakeEffect()))
    let woken = Self.woken(machine.wakeNext(until: .seconds(1), following: false))
    #expect(woken?.follower == nil)
    #expect(woken?.watch == false)
  }

  // MARK: Following

  @Test("waking an effect's sleeper asks once to hear the effect's end, until it ends")
  func watchOncePerEffect() {
    var machine = Machine()
    let effect = FakeEffect()
    _ = Self.park(&machine, Self.sleeper(&machine, until: 1, owner: effect))
    #expect(Self.woken(machine.wakeNext(until: .seconds(1), following: true))?.watch == true)
    _ = Self.park(&machine, Self.sleeper(&machine, until: 2, owner: effect))
    #expect(Self.woken(machine.wakeNext(until: .seconds(2), following: true))?.watch == false)
    _ = machine.effectEnded(ObjectIdentifier(effect))
    _ = Self.park(&machine, Self.sleeper(&machine, until: 3, owner: effect))
    #expect(Self.woken(machine.wakeNext(until: .seconds(3), following: true))?.watch == true)
  }

  @Test("a parked follower of an effect is handed back when the effect sleeps on the clock again")
  func quietWhenTheEffectSleepsAgain() throws {
    var machine = Machine()
    let effect = FakeEffect()
    _ = Self.park(&machine, Self.sleeper(&machine, until: 1, owner: effect))
    let follower = try #require(Self.woken(machine.wakeNext(until: .seconds(1), following: true))?.follower)
    let isParked = machine.parkFollower(follower, "advance")
    #expect(isParked)
    let wakeUps = Self.park(&machine, Self.sleeper(&machine, until: 2, owner: effect))
    #expect(wakeUps?.followers == ["advance"])
  }

  @Test("a parked follower of an effect is handed back when the effect ends")
  func quietWhenTheEffectEnds() throws {
    var machine = Machine()
    let effect = FakeEffect()
    _ = Self.park(&machine, Self.sleeper(&machine, until: 1, owner: effect))
    let follower = try #require(Self.woken(machine.wakeNext(until: .seconds(1), following: true))?.follower)
    let isParked = machine.parkFollower(follower, "advance")
    #expect(isParked)
    #expect(machine.effectEnded(ObjectIdentifier(FakeEffect())) == [])  // another effect
    #expect(machine.effectEnded(ObjectIdentifier(effect)) == ["advance"])
  }

  @Test("a follower of a task outside any effect is quiet once its sleep has returned")
  func quietWhenThePlainSleepReturns() throws {
    var machine = Machine()
    let sleeper = Self.sleeper(&machine, until: 1)
    _ = Self.park(&machine, sleeper)
    let follower = try #require(Self.woken(machine.wakeNext(until: .seconds(1), following: true))?.follower)
    let isParked = machine.parkFollower(follower, "advance")
    #expect(isParked)
    #expect(machine.sleepReturned(sleeper.id) == ["advance"])
  }

  @Test("a follower that became quiet before its advance parked is not parked")
  func quietBeforeParking() throws {
    var machine = Machine()
    let sleeper = Self.sleeper(&machine, until: 1)
    _ = Self.park(&machine, sleeper)
    let follower = try #require(Self.woken(machine.wakeNext(until: .seconds(1), following: true))?.follower)
    #expect(machine.sleepReturned(sleeper.id) == [])  // quiet, nobody parked yet
    let isParked = machine.parkFollower(follower, "advance")
    #expect(!isParked)
    #expect(machine.removeFollower(follower) == nil)
  }

  @Test("removing a parked follower (its advance was cancelled) hands it back")
  func removingAFollower() throws {
    var machine = Machine()
    _ = Self.park(&machine, Self.sleeper(&machine, until: 1, owner: FakeEffect()))
    let follower = try #require(Self.woken(machine.wakeNext(until: .seconds(1), following: true))?.follower)
    let isParked = machine.parkFollower(follower, "advance")
    #expect(isParked)
    #expect(machine.removeFollower(follower) == "advance")
    #expect(machine.removeFollower(follower) == nil)
  }

  // MARK: Taking turns

  @Test("advances take turns in the order they were called; one that leaves the queue is handed back")
  func advancesTakeTurns() {
    var machine = Machine()
    #expect(machine.beginAdvance(1, "first", isCancelled: false) == true)
    #expect(machine.beginAdvance(2, "second", isCancelled: false) == nil)
    #expect(machine.beginAdvance(3, "third", isCancelled: false) == nil)
    #expect(machine.leaveAdvanceQueue(3) == "third")
    #expect(machine.endAdvance() == "second")
    #expect(machine.endAdvance() == nil)
    #expect(machine.beginAdvance(4, "fourth", isCancelled: false) == true)
  }

  @Test("a cancelled advance that finds another moving time goes on at once, without the turn")
  func cancelledAdvanceSkipsTheQueue() {
    var machine = Machine()
    #expect(machine.beginAdvance(1, "first", isCancelled: false) == true)
    #expect(machine.beginAdvance(2, "cancelled", isCancelled: true) == false)
    #expect(machine.endAdvance() == nil)
  }

  // MARK: Counting sleepers

  @Test("a wait for sleepers is answered at once when enough sleep, refused when cancelled, else parked")
  func countWaiters() {
    var machine = Machine()
    #expect(machine.parkCountWaiter(1, count: 0, "enough", isCancelled: false) == true)
    #expect(machine.parkCountWaiter(2, count: 1, "cancelled", isCancelled: true) == false)
    #expect(machine.parkCountWaiter(3, count: 1, "parked", isCancelled: false) == nil)
    #expect(machine.removeCountWaiter(3) == "parked")
    #expect(machine.removeCountWaiter(3) == nil)
  }

  // MARK: Order

  @Test("the order of equal deadlines: deadline, then the clock's time the sleep began, then start order, then id")
  func rankOrder() {
    typealias Rank = Machine.Rank
    func order(_ value: UInt32) -> EffectObservation.StartOrder { EffectObservation.StartOrder(value) }
    let base = Rank(deadline: .seconds(2), sleptAt: .seconds(1), startOrder: order(5), id: 5)
    #expect(Rank(deadline: .seconds(1), sleptAt: .seconds(1), startOrder: order(9), id: 9) < base)
    #expect(Rank(deadline: .seconds(2), sleptAt: .zero, startOrder: order(9), id: 9) < base)
    #expect(Rank(deadline: .seconds(2), sleptAt: .seconds(1), startOrder: order(4), id: 9) < base)
    #expect(Rank(deadline: .seconds(2), sleptAt: .seconds(1), startOrder: order(5), id: 4) < base)
    #expect(!(base < base))
  }

  @Test("start orders compare by their wrapping distance: the count's wrap keeps the order")
  func startOrderWraps() {
    typealias Order = EffectObservation.StartOrder
    #expect(Order(1) < Order(2))
    #expect(!(Order(2) < Order(2)))
    #expect(Order(UInt32.max) < Order(0))  // taken just before the count wrapped
    #expect(!(Order(0) < Order(UInt32.max)))
  }
}
