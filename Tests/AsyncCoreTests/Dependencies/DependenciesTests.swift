import AsyncCore
import AsyncCoreTesting
import Testing

/// A worker that answers with its name, for telling fakes apart.
protocol Greeter: Sendable {
  var name: String { get }
}

struct NamedGreeter: Greeter {
  let name: String
}

enum GreeterKey: DependencyKey {
  typealias Value = any Greeter
}

/// A key with a default: read while nobody set it.
enum PrefixKey: DependencyKey {
  static var defaultValue: String { "default" }
}

/// A key with no default, never set in these tests but one.
enum MissingKey: DependencyKey {
  typealias Value = Int
}

extension Dependencies {
  var greeter: any Greeter {
    get { self[GreeterKey.self] }
    set { self[GreeterKey.self] = newValue }
  }

  var prefix: String {
    get { self[PrefixKey.self] }
    set { self[PrefixKey.self] = newValue }
  }
}

/// A parent whose optional child's `dependencies:` removes the greeter,
/// which the child's effect then reads.
enum NarrowingParent {
  struct State: Sendable {
    var child: Int? = 0
    var fixed = 0
  }

  enum Action: Sendable {
    case child(Int)

    static let childCase = ActionCase(embed: Action.child) { if case .child(let action) = $0 { action } else { nil } }
  }

  static let child = Reduce<Int, Int> { _, _ in
    .run { send in await send(send.dependencies.greeter.name.count) }
  }

  static let reducer = Reduce<State, Action> { _, _ in }
    .ifLet(\.child, action: Action.childCase, dependencies: { $0.remove(GreeterKey.self) }, then: child)

  /// The same child placed with `Reduce.scope` over a fixed key path.
  static let scoped = Reduce<State, Action>.scope(
    state: \.fixed, action: Action.childCase, dependencies: { $0.remove(GreeterKey.self) }, child: child)

  static func makeCore(reducer: Reduce<State, Action> = reducer) -> Core<State, Action> {
    Core(
      initialState: State(), dependencies: Dependencies { $0.greeter = NamedGreeter(name: "core's") }, reducer: reducer)
  }
}

/// Effects reach their workers through the core's dependencies.
@Suite("Dependencies", .hangDetector)
struct DependenciesTests {
  enum Action: Sendable, Equatable {
    /// Sleeps `seconds` on the clock, then reports the greeter it read.
    case greet(afterSeconds: Int)
    case greeted(String)
    case prefix
  }

  static func makeCore(clock: ManualClock = ManualClock(), dependencies: Dependencies) -> Core<[String], Action> {
    Core(initialState: [], dependencies: dependencies, clock: clock) { log, action in
      switch action {
      case .greet(let seconds):
        return .run { send in
          if seconds > 0 { try await send.clock.sleep(for: .seconds(seconds)) }
          await send(.greeted(send.dependencies.greeter.name))
        }
      case .prefix:
        return .run { send in await send(.greeted(send.dependencies.prefix)) }
      case .greeted(let name):
        log.append(name)
        return .none
      }
    }
  }

  @Test("an effect reads the dependencies its core was created with")
  func createdWith() async throws {
    let core = Self.makeCore(dependencies: Dependencies { $0.greeter = NamedGreeter(name: "live") })
    try await core.dispatch(.greet(afterSeconds: 0)).finish()
    #expect(await core.state == ["live"])
    #expect(await core.dependencies.contains(GreeterKey.self))
  }

  @Test("a key nobody set reads its default; setting it replaces the default")
  func defaults() async throws {
    let core = Self.makeCore(dependencies: Dependencies())
    try await core.dispatch(.prefix).finish()
    await core.updateDependencies { $0.prefix = "set" }
    try await core.dispatch(.prefix).finish()
    #expect(await core.state == ["default", "set"])
    #expect(await core.dependencies.contains(PrefixKey.self))
    #expect(!Dependencies().contains(PrefixKey.self))
  }

  @Test("updateDependencies: effects started after see the new value, running ones keep the set they started with")
  func updateMidway() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock, dependencies: Dependencies { $0.greeter = NamedGreeter(name: "old") })
    let first = try await core.dispatch(.greet(afterSeconds: 1))
    try await clock.waitForSleepers(atLeast: 1)
    await core.updateDependencies { $0.greeter = NamedGreeter(name: "new") }
    let second = try await core.dispatch(.greet(afterSeconds: 1))
    try await clock.waitForSleepers(atLeast: 2)
    await clock.advance(by: .seconds(1))
    try await first.finish()
    try await second.finish()
    #expect(await core.state == ["old", "new"])
  }

  @Test("actions a task sent before updateDependencies start their effects with the old dependencies")
  func sentBeforeTheUpdate() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(clock: clock, dependencies: Dependencies { $0.greeter = NamedGreeter(name: "old") })
    core.send(.greet(afterSeconds: 1))
    await core.updateDependencies { $0.greeter = NamedGreeter(name: "new") }
    try await clock.waitForSleepers(atLeast: 1)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state == ["old"])
  }

  @Test("an effect can update its core's dependencies for the effects after it")
  func updateFromAnEffect() async throws {
    let weak = WeakBox<Core<[String], Action>>()
    let core = Core<[String], Action>(
      initialState: [], dependencies: Dependencies { $0.greeter = NamedGreeter(name: "before") }
    ) { log, action in
      switch action {
      case .prefix:
        return .run { _ in await weak.object?.updateDependencies { $0.greeter = NamedGreeter(name: "after") } }
      case .greet:
        return .run { send in await send(.greeted(send.dependencies.greeter.name)) }
      case .greeted(let name):
        log.append(name)
        return .none
      }
    }
    weak.set(core)
    try await core.dispatch(.greet(afterSeconds: 0)).finish()
    try await core.dispatch(.prefix).finish()
    try await core.dispatch(.greet(afterSeconds: 0)).finish()
    #expect(await core.state == ["before", "after"])
  }

  @Test("updateDependencies after shutdown is kept, and starts nothing")
  func updateAfterShutdown() async throws {
    let core = Self.makeCore(dependencies: Dependencies())
    await core.shutdown()
    await core.updateDependencies { $0.prefix = "late" }
    #expect(await core.dependencies.prefix == "late")
    #expect(core.metrics.effectsInFlight == 0)
  }

  @Test("Send(dependencies:) runs an effect's operation alone with fakes; send returns what deliver does")
  func sendForTesting() async {
    let received = Events<String>()
    let send = Send<String>(dependencies: Dependencies { $0.greeter = NamedGreeter(name: "fake") }) { name in
      received.record(name)
      return .accepted
    }
    #expect(await send(send.dependencies.greeter.name) == .accepted)
    #expect(received.all == ["fake"])
    let refusing = Send<String> { _ in .effectCancelled }
    #expect(refusing.dependencies.prefix == "default")
    #expect(await refusing("refused") == .effectCancelled)
  }

  @Test("Dependencies is a value: a changed copy leaves the original as it was; remove forgets a value")
  func valueSemantics() {
    let original = Dependencies { $0.prefix = "original" }
    var copy = original
    copy.prefix = "copy"
    #expect(original.prefix == "original")
    #expect(copy.prefix == "copy")
    copy.remove(PrefixKey.self)
    #expect(copy.prefix == "default")
    #expect(!copy.contains(PrefixKey.self))
    #expect(original.contains(PrefixKey.self))
  }

  @Test("reading a key with no default that nobody set stops the program with a message naming the key")
  func missingKeyTraps() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = Core<Int, Int>(initialState: 0) { _, _ in
        .run { send in await send(send.dependencies[MissingKey.self]) }
      }
      try? await core.dispatch(1).finish()
    }
    ProgrammerErrorTests.expectMessage(result, containing: "AsyncCore: no value for the dependency MissingKey")
  }

  /// A core whose effect reads `MissingKey`, and the line that reads it
  /// (outside the exit test, whose body the macro moves: a `#line` there
  /// is the macro's).
  static func coreReadingMissingKey() -> (core: Core<Int, Int>, line: Int) {
    let core = Core<Int, Int>(initialState: 0) { _, _ in
      .run { send in await send(send.dependencies[MissingKey.self]) }
    }
    return (core, #line - 2)
  }

  @Test("a key with no default that nobody set stops the program at the line that read it")
  func missingKeyStopsAtTheReader() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = Self.coreReadingMissingKey().core
      try? await core.dispatch(1).finish()
    }
    let place = "AsyncCoreTests/DependenciesTests.swift:\(Self.coreReadingMissingKey().line)"
    ProgrammerErrorTests.expectMessage(
      result, containing: "\(place): Fatal error: AsyncCore: no value for the dependency")
    ProgrammerErrorTests.expectMessage(result, containing: "(read at \(place))")
  }

  @Test("a key with no default read through a property stops the program at the property, not in AsyncCore")
  func missingKeyThroughAProperty() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = Self.makeCore(dependencies: Dependencies())
      try? await core.dispatch(.greet(afterSeconds: 0)).finish()
    }
    // Line 30: the getter of `Dependencies.greeter`, at the top of this file.
    ProgrammerErrorTests.expectMessage(
      result,
      containing:
        "AsyncCoreTests/DependenciesTests.swift:30: Fatal error: AsyncCore: no value for the dependency GreeterKey")
  }

  @Test("a key a child's dependencies: removed, read by the child, names that child's placement")
  func removedByAChild() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = NarrowingParent.makeCore()
      try? await core.dispatch(.child(1)).finish()
    }
    ProgrammerErrorTests.expectMessage(
      result,
      containing: "the dependencies: of the child at \\State.child (placed at AsyncCoreTests/DependenciesTests.swift:")
    ProgrammerErrorTests.expectMessage(result, containing: "removed it")
    if let result {
      let standardError = String(decoding: result.standardErrorContent, as: UTF8.self)
      #expect(!standardError.contains("when creating the core"))
    }
  }

  @Test("a key a scope's dependencies: removed, read by the child, names that scope's place")
  func removedByAScope() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = NarrowingParent.makeCore(reducer: NarrowingParent.scoped)
      try? await core.dispatch(.child(1)).finish()
    }
    ProgrammerErrorTests.expectMessage(
      result,
      containing: "the dependencies: of the child at \\State.fixed (placed at AsyncCoreTests/DependenciesTests.swift:")
  }

  @Test("updateDependencies from a reducer stops the program with a message")
  func updateFromAReducerTraps() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let reference = WeakBox<Core<Int, Int>>()
      let core = Core<Int, Int>(
        initialState: 0,
        reducer: Reduce { state, action in
          state += action
          reference.object?.assumeIsolated { core in core.updateDependencies { $0.prefix = "x" } }
        })
      reference.set(core)
      _ = try? await core.dispatch(1)
    }
    ProgrammerErrorTests.expectMessage(result, containing: "AsyncCore: a reducer")
  }
}
