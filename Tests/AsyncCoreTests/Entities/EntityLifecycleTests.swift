import Testing

@testable import AsyncCore

/// The lifecycle of one entity, driven directly: `Int` stands for its core.
@Suite("EntityLifecycle: passive, activating, active, passivating")
struct EntityLifecycleTests {
  typealias Life = EntityLifecycle<Int, String>

  @Test("a send to a passive entity queues it and starts the activation; the core gets it first")
  func sendActivates() {
    var life = Life()
    guard case .activate = life.send("a") else {
      Issue.record("no activation")
      return
    }
    guard case .queued = life.send("b") else {
      Issue.record("not queued")
      return
    }
    guard case .wait = life.use(waiter: 1) else {
      Issue.record("no wait")
      return
    }
    let released = life.activated(7)
    #expect(released.pending == ["a", "b"])
    #expect(released.waiters == [1])
    #expect(life.users == 1)
    guard case .deliver(7) = life.send("c") else {
      Issue.record("not delivered")
      return
    }
  }

  @Test("a use of a passive entity waits and starts the activation; an active one proceeds")
  func useActivates() {
    var life = Life()
    guard case .activateAndWait = life.use(waiter: 3) else {
      Issue.record("no activation")
      return
    }
    _ = life.activated(1)
    guard case .proceed(1) = life.use(waiter: 4) else {
      Issue.record("did not proceed")
      return
    }
    #expect(life.users == 2)
    life.release()
    life.release()
    #expect(life.users == 0)
  }

  @Test("a passivation begins only when active, unused and idle")
  func passivationNeedsIdle() {
    var life = Life()
    #expect(life.beginPassivation(isIdle: true) == nil)  // passive
    _ = life.send("a")
    #expect(life.beginPassivation(isIdle: true) == nil)  // activating
    _ = life.activated(5)
    #expect(life.beginPassivation(isIdle: false) == nil)  // an effect or observer
    _ = life.use(waiter: 1)
    #expect(life.beginPassivation(isIdle: true) == nil)  // a user
    #expect(life.beginPassivation(isIdle: true, ignoringUsers: true) == 5)  // its core stopped by itself
  }

  @Test("what arrives while passivating waits, and makes the entity activate again")
  func arrivalsDuringPassivation() {
    var life = Life()
    _ = life.send("a")
    _ = life.activated(1)
    #expect(life.beginPassivation(isIdle: true) == 1)
    guard case .queued = life.send("b") else {
      Issue.record("not queued")
      return
    }
    guard case .wait = life.use(waiter: 9) else {
      Issue.record("no wait")
      return
    }
    guard case .activate = life.passivated() else {
      Issue.record("no reactivation")
      return
    }
    let released = life.activated(2)
    #expect(released.pending == ["b"])
    #expect(released.waiters == [9])
  }

  @Test("a passivation with nothing waiting leaves the entity forgettable")
  func passivatedForget() {
    var life = Life()
    _ = life.send("a")
    _ = life.activated(1)
    _ = life.beginPassivation(isIdle: true)
    #expect(!life.isForgettable)
    guard case .forget = life.passivated() else {
      Issue.record("not forgotten")
      return
    }
    #expect(life.isForgettable)
  }

  @Test("a refused passivation keeps the core, and hands it what waited")
  func refusedPassivation() {
    var life = Life()
    _ = life.send("a")
    _ = life.activated(4)
    _ = life.beginPassivation(isIdle: true)
    _ = life.send("b")
    _ = life.use(waiter: 2)
    let released = life.passivationRefused()
    #expect(released.pending == ["b"])
    #expect(released.waiters == [2])
    #expect(life.isActive)
    #expect(life.users == 1)
  }

  @Test("a failed activation refuses what waited and goes back to passive")
  func failedActivation() {
    var life = Life()
    _ = life.send("a")
    _ = life.use(waiter: 1)
    let refused = life.activationFailed()
    #expect(refused.pending == ["a"])
    #expect(refused.waiters == [1])
    #expect(life.isForgettable)
    guard case .activate = life.send("b") else {
      Issue.record("no new activation")
      return
    }
  }

  @Test("an entity with nothing to read is active at once, with nothing waiting")
  func activatedAtOnce() {
    var life = Life()
    life.activatedAtOnce(3)
    #expect(life.isActive)
    guard case .deliver(3) = life.send("a") else {
      Issue.record("not delivered")
      return
    }
    guard case .proceed(3) = life.use(waiter: 1) else {
      Issue.record("did not proceed")
      return
    }
  }
}
