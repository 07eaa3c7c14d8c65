import Testing

@testable import AsyncCore

/// Middleware: code that sees every action before the reducer,
/// with the state before it, and passes, replaces or drops it, or sends new
/// actions, which are queued and pass the whole chain.
@Suite("Middleware", .hangDetector)
struct MiddlewareTests {
  // MARK: - Typical uses

  @Test("logging: a middleware sees every action in order, whichever way it came, effects' included")
  func loggingSeesEveryAction() async throws {
    let core = makeAccountCore()
    let logged = Events<AccountAction>()
    await core.addMiddleware { action, _, _ in
      logged.record(action)
      return .pass
    }
    core.send(.increment)
    core.send(contentsOf: [.add(2), .add(3)])
    try await core.dispatch(.setName("ann"))
    try await core.dispatch(contentsOf: [.add(4), .setAge(30)])
    try await core.dispatch(.load).finish()  // its effect sends .loaded(42)
    try await core.dispatch(.chain)  // its `.send` effect returns .increment
    try await core.waitUntilIdle()
    let everyAction: [AccountAction] = [
      .increment, .add(2), .add(3), .setName("ann"), .add(4), .setAge(30), .load, .loaded(42), .chain, .increment,
    ]
    #expect(logged.all == everyAction)
    #expect(await core.state.reduced == everyAction)
  }

  @Test("analytics: a middleware records events for some actions, with a value of the state before each")
  func analytics() async throws {
    let core = makeAccountCore()
    let events = Events<String>()
    await core.addMiddleware { action, state, _ in
      if case .purchase(let amount) = action {
        events.record("purchase \(amount) with \(state.count) already bought")
      }
      return .pass
    }
    try await core.dispatch(.purchase(3))
    try await core.dispatch(.setName("ann"))  // not counted
    try await core.dispatch(.purchase(2))
    #expect(events.all == ["purchase 3 with 0 already bought", "purchase 2 with 3 already bought"])
    #expect(await core.state.count == 5)
  }

  @Test("validation: invalid input is dropped; dispatch of it returns normally and its handle covers nothing")
  func validationDropsBadInput() async throws {
    let core = makeAccountCore()
    await core.addMiddleware { action, _, _ in
      switch action {
      case .setAge(let age) where !(0...150).contains(age): return .drop
      case .setName(let name) where name.isEmpty: return .drop
      default: return .pass
      }
    }
    try await core.dispatch(.setAge(-1))
    try await core.dispatch(.setName(""))
    try await core.dispatch(.setAge(40))
    #expect(await core.state.age == 40)
    #expect(await core.state.name == "")
    #expect(await core.state.reduced == [.setAge(40)])

    // A dropped action that would have started an effect starts none.
    let gatekeeper = await core.addMiddleware { action, _, _ in action == .load ? .drop : .pass }
    let handle = try await core.dispatch(.load)
    #expect(handle.isFinished)
    try await handle.finish()  // returns at once
    #expect(core.metrics.effectsInFlight == 0)
    #expect(await core.state.loaded == nil)
    await core.removeMiddleware(gatekeeper)
  }

  @Test("a guard refuses actions while the state is locked, judging each action by the state before it")
  func guardWhileLocked() async throws {
    let core = makeAccountCore()
    let refused = Events<AccountAction>()
    await core.addMiddleware { action, state, _ in
      guard state.isLocked, action != .unlock else { return .pass }
      refused.record(action)
      return .drop
    }
    // One batch: each action is judged by the state the actions before it left.
    core.send(contentsOf: [.increment, .lock, .increment, .add(5), .unlock, .increment])
    try await core.waitUntilIdle()
    #expect(refused.all == [.increment, .add(5)])
    #expect(await core.state.count == 2)
    try await core.dispatch(contentsOf: [.lock, .increment])
    #expect(await core.state.count == 2)
  }

  // MARK: - The chain

  @Test("a replaced action goes on in place of the original, to the next middleware and to the reducer")
  func transform() async throws {
    let core = makeAccountCore()
    let seenAfter = Events<AccountAction>()
    await core.addMiddleware { action, _, _ in
      switch action {
      case .add(let amount) where amount > 10: return .replace(with: .add(10))
      case .setName(let name): return .replace(with: .setName(name.uppercased()))
      default: return .pass
      }
    }
    await core.addMiddleware { action, _, _ in
      seenAfter.record(action)
      return .pass
    }
    try await core.dispatch(.add(500))
    try await core.dispatch(.add(3))
    try await core.dispatch(.setName("ann"))
    #expect(seenAfter.all == [.add(10), .add(3), .setName("ANN")])
    #expect(await core.state.count == 13)
    #expect(await core.state.name == "ANN")
  }

  @Test("middleware runs in the order added; a drop stops the chain")
  func chainOrder() async throws {
    let core = makeAccountCore()
    let calls = Events<String>()
    await core.addMiddleware { action, _, _ in
      calls.record("first \(action)")
      if case .add(let amount) = action { return .replace(with: .add(amount * 10)) }
      return .pass
    }
    await core.addMiddleware { action, _, _ in
      calls.record("second \(action)")
      return action == .lock ? .drop : .pass
    }
    await core.addMiddleware { action, _, _ in
      calls.record("third \(action)")
      return .pass
    }
    try await core.dispatch(.add(1))
    try await core.dispatch(.lock)
    #expect(
      calls.all == [
        "first add(1)", "second add(10)", "third add(10)",
        "first lock", "second lock",
      ])
    #expect(await core.state.reduced == [.add(10)])
  }

  @Test("actions a middleware sends are queued, pass the whole chain, and are reduced after the current one")
  func sentActionsAreQueued() async throws {
    let core = makeAccountCore()
    let seenByFirst = Events<AccountAction>()
    let seenBySecond = Events<String>()
    await core.addMiddleware { action, _, context in
      seenByFirst.record(action)
      if case .purchase(let amount) = action {
        #expect(context.send(.add(amount)) == .accepted)
      }
      return .pass
    }
    await core.addMiddleware { action, state, _ in
      seenBySecond.record("\(action) at \(state.reduced.count)")
      return .pass
    }
    // Reduced re-entrantly, .add(5) would come before .purchase(5); as a
    // `.send` effect's follow-up, before .increment. Queued, it comes last.
    try await core.dispatch(contentsOf: [.purchase(5), .increment])
    try await core.waitUntilIdle()
    #expect(await core.state.reduced == [.purchase(5), .increment, .add(5)])
    #expect(seenByFirst.all == [.purchase(5), .increment, .add(5)])
    #expect(seenBySecond.all == ["purchase(5) at 0", "increment at 1", "add(5) at 2"])
  }

  @Test("an action a middleware sends from a drained batch is reduced after the batch, in the order sent")
  func sentActionsFromABatch() async throws {
    let core = makeAccountCore()
    await core.addMiddleware { action, _, context in
      if case .purchase(let amount) = action { context.send(.add(amount)) }
      return .pass
    }
    core.send(contentsOf: [.purchase(1), .purchase(2), .increment])
    try await core.waitUntilIdle()
    #expect(await core.state.reduced == [.purchase(1), .purchase(2), .increment, .add(1), .add(2)])
  }

  @Test("a middleware's sends can chain: each queued action passes the chain in its turn")
  func sentActionsChain() async throws {
    let core = makeAccountCore()
    await core.addMiddleware { action, _, context in
      // A countdown: each .add(n) with n > 0 sends .add(n - 1).
      if case .add(let amount) = action, amount > 0 { context.send(.add(amount - 1)) }
      return .pass
    }
    try await core.dispatch(.add(3))
    try await core.waitUntilIdle()
    #expect(await core.state.reduced == [.add(3), .add(2), .add(1), .add(0)])
  }

  // MARK: - Adding and removing

  @Test("a removed middleware sees nothing afterwards; removing it again, or an id of another core, does nothing")
  func addAndRemoveAtRuntime() async throws {
    let core = makeAccountCore()
    let other = makeAccountCore()
    let seen = Events<AccountAction>()
    try await core.dispatch(.add(1))  // before it was added
    let id = await core.addMiddleware { action, _, _ in
      seen.record(action)
      return .pass
    }
    let otherID = await other.addMiddleware { _, _, _ in .drop }
    core.send(.add(2))  // sent before the removal: passes it
    #expect(await core.removeMiddleware(id))
    core.send(.add(3))
    try await core.dispatch(.add(4))
    try await core.waitUntilIdle()
    #expect(seen.all == [.add(2)])
    #expect(await core.state.count == 10)
    #expect(await !core.removeMiddleware(id))
    #expect(await !core.removeMiddleware(otherID))
    #expect(await other.removeMiddleware(otherID))
    #expect(id != otherID)
  }

  @Test("actions sent before addMiddleware are reduced without it; those sent after pass it")
  func addedMiddlewareSeesLaterActions() async throws {
    let core = makeAccountCore()
    let seen = Events<AccountAction>()
    core.send(.add(1))
    await core.addMiddleware { action, _, _ in
      seen.record(action)
      return .pass
    }
    core.send(.add(2))
    try await core.waitUntilIdle()
    #expect(seen.all == [.add(2)])
  }

  @Test("removing one middleware keeps the others in their order")
  func removeFromTheMiddle() async throws {
    let core = makeAccountCore()
    let calls = Events<String>()
    let tags = ["a", "b", "c"]
    var ids: [MiddlewareID] = []
    for tag in tags {
      ids.append(
        await core.addMiddleware { _, _, _ in
          calls.record(tag)
          return .pass
        })
    }
    await core.removeMiddleware(ids[1])
    try await core.dispatch(.increment)
    #expect(calls.all == ["a", "c"])
  }

  @Test("middleware can be added from an effect and from an observer's loop")
  func addFromAnEffectAndAnObserver() async throws {
    let reference = WeakBox<AccountCore>()
    let seenByEffects = Events<AccountAction>()
    let core = AccountCore(initialState: Account()) { state, action in
      reduceAccount(&state, action)
      guard action == .lock else { return .none }
      return .run { _ in
        await reference.object?.addMiddleware { action, _, _ in
          seenByEffects.record(action)
          return .pass
        }
      }
    }
    reference.set(core)
    try await core.dispatch(.lock).finish()
    try await core.dispatch(.increment)
    #expect(seenByEffects.all == [.increment])

    // An observer that installs a middleware once the count reaches 2.
    let seenByObserver = Events<AccountAction>()
    let counts = await core.observe(\.count)
    let installed = Task {
      for await count in counts where count >= 2 {
        await core.addMiddleware { action, _, _ in
          seenByObserver.record(action)
          return .pass
        }
        return
      }
    }
    try await core.dispatch(.increment)
    await installed.value
    try await core.dispatch(.add(7))
    #expect(seenByObserver.all == [.add(7)])
  }

  @Test("what a subscriber sends passes the chain, after the publication that called it")
  func subscriberSendsPassTheChain() async throws {
    let core = makeAccountCore()
    let seen = Events<AccountAction>()
    await core.addMiddleware { action, _, _ in
      seen.record(action)
      return action == .unlock ? .replace(with: .setName("unlocked")) : .pass
    }
    let reference = WeakBox<AccountCore>()
    reference.set(core)
    let subscriber = await core.subscribe(to: \.isLocked) { isLocked in
      if isLocked { reference.object?.send(.unlock) }
    }
    try await core.dispatch(.lock)
    try await core.waitUntilIdle()
    #expect(seen.all == [.lock, .unlock])
    #expect(await core.state.reduced == [.lock, .setName("unlocked")])
    withExtendedLifetime(subscriber) {}
  }

  // MARK: - With dispatch, effects and the action log

  @Test("dispatch returns after the replaced action is reduced; its handle covers the effects that one starts")
  func dispatchOfAReplacedAction() async throws {
    let core = makeAccountCore()
    await core.addMiddleware { action, _, _ in action == .refresh ? .replace(with: .load) : .pass }
    let handle = try await core.dispatch(.refresh)
    try await handle.finish()  // the effect of .load and the .loaded it sent
    #expect(await core.state.loaded == 42)
    #expect(await core.state.reduced == [.load, .loaded(42)])
  }

  @Test("actions effects send pass the chain in their effect's lineage, with the state before each")
  func effectsActionsPassTheChain() async throws {
    let core = makeAccountCore()
    let seen = Events<String>()
    await core.addMiddleware { action, state, _ in
      seen.record("\(action) loaded=\(state.loaded.map(String.init) ?? "nil")")
      if case .loaded(let value) = action { return .replace(with: .loaded(value + 1)) }
      return .pass
    }
    try await core.dispatch(.load).finish()  // covers the replaced follow-up too
    #expect(await core.state.loaded == 43)
    try await core.dispatch(.load).finish()
    #expect(seen.all == ["load loaded=nil", "loaded(42) loaded=nil", "load loaded=43", "loaded(42) loaded=43"])
  }

  @Test("a `.send` follow-up passes the chain and can be dropped like any action")
  func followUpsPassTheChain() async throws {
    let core = makeAccountCore()
    await core.addMiddleware { action, state, _ in
      // .chain returns .send(.increment): drop the follow-up once count is 1.
      action == .increment && state.count >= 1 ? .drop : .pass
    }
    try await core.dispatch(.chain)
    try await core.dispatch(.chain)
    #expect(await core.state.count == 1)
    #expect(await core.state.reduced == [.chain, .increment, .chain])
  }

  @Test("the action log shows what was reduced: replaced actions as replaced, dropped ones not at all")
  func actionLogShowsWhatWasReduced() async throws {
    let core = makeAccountCore()
    let log = collect(await core.actions(buffering: .all))
    await core.addMiddleware { action, _, _ in
      switch action {
      case .add(let amount): return .replace(with: .add(amount * 2))
      case .lock: return .drop
      default: return .pass
      }
    }
    try await core.dispatch(.add(1))
    try await core.dispatch(.lock)
    core.send(contentsOf: [.add(2), .lock, .increment])
    try await core.waitUntilIdle()
    await core.shutdown()
    let records = await log.value
    #expect(records.map(\.action) == [.add(2), .add(4), .increment])
    #expect(records.map(\.stateAfter.count) == [2, 6, 7])
    #expect(records.allSatisfy { !$0.stateAfter.isLocked })
  }

  @Test("observers see the result of the replaced action and nothing for a dropped one")
  func observersAndSubscribers() async throws {
    let core = makeAccountCore()
    await core.addMiddleware { action, _, _ in action == .lock ? .drop : .pass }
    let locks = Events<Bool>()
    let every = Events<Int>()
    let subscriber = await core.subscribe(to: \.isLocked) { locks.record($0) }
    let counts = await core.subscribe(to: \.reduced.count, buffering: .all) { every.record($0) }
    try await core.dispatch(contentsOf: [.lock, .increment, .lock])
    #expect(locks.all == [false])
    #expect(every.all == [0, 1])
    withExtendedLifetime((subscriber, counts)) {}
  }

  // MARK: - Shutdown

  @Test("after shutdown begins a middleware's sends are refused, and it can tell; shutdown removes the chain")
  func sendsAfterShutdownAreRefused() async throws {
    let gate = Gate()
    let core = AccountCore(initialState: Account()) { state, action in
      reduceAccount(&state, action)
      guard action == .load else { return .none }
      return .run { send in
        await gate.wait()
        await send(.loaded(1))  // a graceful shutdown still accepts it
      }
    }
    let results = Events<String>()
    let id = await core.addMiddleware { action, _, context in
      if case .loaded = action { results.record("send: \(context.send(.increment))") }
      return .pass
    }
    try await core.dispatch(.load)
    let stopping = Task { await core.shutdown() }
    #expect(await yieldUntil { core.hasShutDown })
    gate.open()
    await stopping.value
    #expect(results.all == ["send: shutDown"])
    #expect(await core.state.reduced == [.load, .loaded(1)])
    #expect(await !core.removeMiddleware(id))  // the stopped core let it go
  }

  @Test("a context kept after shutdown refuses; middleware added to a stopped core never runs")
  func contextAfterShutdown() async throws {
    let core = makeAccountCore()
    let kept = Box<MiddlewareContext<AccountAction>?>(nil)
    await core.addMiddleware { _, _, context in
      kept.set(context)
      return .pass
    }
    try await core.dispatch(.increment)
    await core.shutdown()
    #expect(kept.value?.send(.increment) == .shutDown)
    let late = await core.addMiddleware { _, _, _ in .drop }
    #expect(await !core.removeMiddleware(late))
    #expect(await core.state.count == 1)
  }

  // MARK: - Races

  @Test("adding and removing races with sends from several tasks: every action is reduced once")
  func addAndRemoveRaceWithSends() async throws {
    let core = makeAccountCore()
    let counting = Tally()
    await core.addMiddleware { action, _, _ in
      if case .increment = action { counting.add() }
      return .pass
    }
    let senders = 4
    let perSender = 2_000
    await withTaskGroup { group in
      for _ in 0..<senders {
        group.addTask {
          for index in 0..<perSender {
            if index.isMultiple(of: 3) {
              _ = try? await core.dispatch(.increment)
            } else {
              core.send(.increment)
            }
          }
        }
      }
      group.addTask {
        for _ in 0..<200 {
          let id = await core.addMiddleware { _, _, _ in .pass }
          await core.removeMiddleware(id)
        }
      }
    }
    try await core.waitUntilIdle()
    #expect(counting.value == senders * perSender)
    #expect(await core.state.count == senders * perSender)
  }

  @Test("adding and removing races with shutdown: nothing hangs, and every accepted action is reduced once")
  func addAndRemoveRaceWithShutdown() async throws {
    let core = makeAccountCore()
    let accepted = Tally()
    let seen = Tally()
    await core.addMiddleware { _, _, _ in
      seen.add()
      return .pass
    }
    await withTaskGroup { group in
      group.addTask {
        for _ in 0..<1_000 where core.send(.increment) == .accepted { accepted.add() }
      }
      group.addTask {
        for _ in 0..<100 {
          let id = await core.addMiddleware { _, _, _ in .pass }
          await core.removeMiddleware(id)
        }
      }
      group.addTask { await core.shutdown() }
    }
    let count = await core.state.count
    #expect(count == accepted.value)
    #expect(seen.value == count)
  }

  // MARK: - Testing a middleware on its own

  @Test("a middleware can be tested on its own with a context of the test's own")
  func middlewareOnItsOwn() {
    let sent = Events<AccountAction>()
    let context = MiddlewareContext<AccountAction> { action in
      sent.record(action)
      return .accepted
    }
    let checkout:
      @Sendable (AccountAction, Account, MiddlewareContext<AccountAction>) -> MiddlewareDecision<AccountAction> = {
        action, state, context in
        guard case .purchase = action, state.isLocked else { return .pass }
        context.send(.setName("locked"))
        return .drop
      }
    #expect(checkout(.purchase(1), Account(), context) == .pass)
    #expect(checkout(.purchase(1), Account(isLocked: true), context) == .drop)
    #expect(sent.all == [.setName("locked")])
  }
}

// MARK: - Reaching back into the core

/// Middleware is user code running inside the core: reaching back in stops
/// the program with the core's message, as for reducers and subscribers.
/// Each case runs in a child process (an exit test).
@Suite("Middleware reaching back into its core stops the program", .hangDetector)
struct MiddlewareReentryTests {
  /// Where user code reaches back in from.
  enum Place: String, Codable, Sendable, CaseIterable {
    case middleware
    case reducer
    case subscriber
  }

  /// What it reaches for.
  enum Reach: String, Codable, Sendable, CaseIterable {
    case updateDependencies
    case cancelEffects
    case addMiddleware
    case removeMiddleware

    /// `id`: any id, for `removeMiddleware`.
    func perform(on core: Core<Int, Int>, id: MiddlewareID) {
      core.assumeIsolated { core in
        switch self {
        case .updateDependencies: core.updateDependencies { _ in }
        case .cancelEffects: core.cancelEffects(id: 1)
        case .addMiddleware: core.addMiddleware { _, _, _ in .pass }
        case .removeMiddleware: core.removeMiddleware(id)
        }
      }
    }

    /// What the message names as the call that reached back.
    var call: String {
      switch self {
      case .updateDependencies: "updateDependencies(_:)"
      case .cancelEffects: "cancelEffects(id:)"
      case .addMiddleware: "addMiddleware(_:)"
      case .removeMiddleware: "removeMiddleware(_:)"
      }
    }
  }

  /// Every reach from middleware; from a reducer or subscriber, only the
  /// calls middleware adds (ProgrammerErrorTests has the others).
  static let cases: [(Place, Reach)] =
    Reach.allCases.map { (.middleware, $0) }
    + [Place.reducer, .subscriber].flatMap { place in [(place, .addMiddleware), (place, .removeMiddleware)] }

  @Test(
    "a middleware, reducer or subscriber reaching back into its core stops the program with a message",
    arguments: cases
  )
  func reachingBack(place: Place, reach: Reach) async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [place, reach] in
      let reference = WeakBox<Core<Int, Int>>()
      // An id to remove: one of another core's.
      let id = await Core<Int, Int>(initialState: 0, reducer: Reduce { _, _ in }).addMiddleware { _, _, _ in .pass }
      let core = Core<Int, Int>(
        initialState: 0,
        reducer: Reduce { state, action in
          state += action
          if place == .reducer, let core = reference.object { reach.perform(on: core, id: id) }
        })
      reference.set(core)
      switch place {
      case .middleware:
        await core.addMiddleware { _, _, _ in
          if let core = reference.object { reach.perform(on: core, id: id) }
          return .pass
        }
        core.send(1)
        try? await core.waitUntilIdle()
      case .reducer:
        _ = try? await core.dispatch(1)
      case .subscriber:
        let subscriber = await core.subscribe(
          to: { $0 },
          { (_: Int) in
            if let core = reference.object { reach.perform(on: core, id: id) }
          })
        withExtendedLifetime(subscriber) {}
      }
    }
    guard let result else { return }  // the exit expectation has already failed
    let standardError = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(standardError.contains("AsyncCore: a reducer, middleware,"), "standard error: \(standardError)")
    #expect(standardError.contains("(through \(reach.call))"), "standard error: \(standardError)")
  }
}

// MARK: - The feature these tests drive

/// A small account: a count, a name and an age to validate, a lock to guard
/// against, a loaded value an effect sends back, and every action reduced,
/// in order.
struct Account: Sendable, Equatable {
  var count = 0
  var name = ""
  var age = 0
  var isLocked = false
  var loaded: Int?
  var reduced: [AccountAction] = []
}

enum AccountAction: Sendable, Equatable {
  case increment
  case add(Int)
  case purchase(Int)
  case setName(String)
  case setAge(Int)
  case lock
  case unlock
  /// Starts an effect that sends `.loaded(42)`.
  case load
  case loaded(Int)
  /// What a middleware may replace with `.load`.
  case refresh
  /// Returns `.send(.increment)`.
  case chain
}

typealias AccountCore = Core<Account, AccountAction>

func reduceAccount(_ state: inout Account, _ action: AccountAction) {
  state.reduced.append(action)
  switch action {
  case .increment: state.count += 1
  case .add(let amount), .purchase(let amount): state.count += amount
  case .setName(let name): state.name = name
  case .setAge(let age): state.age = age
  case .lock: state.isLocked = true
  case .unlock: state.isLocked = false
  case .loaded(let value): state.loaded = value
  case .load, .refresh, .chain: break
  }
}

func makeAccountCore() -> AccountCore {
  AccountCore(initialState: Account()) { state, action in
    reduceAccount(&state, action)
    switch action {
    case .load: return .run { send in await send(.loaded(42)) }
    case .chain: return .send(.increment)
    default: return .none
    }
  }
}

/// A count shared between a test and the middleware it installs.
final class Tally: Sendable {
  private let count = Locked(0)

  func add() { count.withLock { $0 += 1 } }
  var value: Int { count.withLock { $0 } }
}
