import AsyncCore
import Observation
import Testing

/// The `@Observable` bridge: chosen props of a core mirrored into
/// a model on the main actor, each assigned only when it changes, so a view
/// reading one prop is invalidated exactly when that prop changes.
///
/// A "view" here is `withObservationTracking` around the reads a SwiftUI
/// body would make (see `TrackedView`): SwiftUI invalidates a body through
/// the same registrar. No test sleeps: `bind` applies the current state
/// before it returns, `update()` returns once the core's state is applied,
/// and a wait for the bridge's own job awaits the view's invalidation.
@Suite("The @Observable bridge", .hangDetector)
struct ModelBridgeTests {
  @Test("when bind returns, the model holds the props of the state after the caller's actions")
  @MainActor
  func bindAppliesTheCurrentState() async {
    let core = makeCounterCore(Counter(count: 5, label: "a"))
    core.send(.increment)
    let model = CounterModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), .prop(\.label, to: \.label), on: model)
    #expect(model.count == 6)
    #expect(model.label == "a")
    #expect(bridge.isActive)
    #expect(core.metrics.observers == 1)
  }

  @Test("a view reading a prop is invalidated exactly when that prop changes, never for other changes")
  @MainActor
  func invalidatedExactlyWhenItsPropChanges() async throws {
    let core = makeCounterCore()
    let model = CounterModel()
    let bridge = await core.bind(
      .prop(\.count, to: \.count),
      .prop(\.label, to: \.label),
      .prop({ $0.count % 2 == 0 }, to: \.isEven),
      on: model
    )
    #expect(model.takeAssignments() == ["count", "label", "isEven"])
    let countView = TrackedView { _ = model.count }
    let labelView = TrackedView { _ = model.label }
    let parityView = TrackedView { _ = model.isEven }

    try await core.dispatch(.setLabel("b"))
    await bridge.update()
    #expect(model.label == "b")
    #expect(model.takeAssignments() == ["label"])
    #expect(countView.invalidations() == 0)
    #expect(labelView.invalidations() == 1)
    #expect(parityView.invalidations() == 0)

    try await core.dispatch(.increment)
    await bridge.update()
    #expect((model.count, model.isEven) == (1, false))
    #expect(model.takeAssignments() == ["count", "isEven"])
    #expect(countView.invalidations() == 1)
    #expect(labelView.invalidations() == 0)
    #expect(parityView.invalidations() == 1)

    try await core.dispatch(.add(2))  // the count changes, its parity does not
    await bridge.update()
    #expect(model.count == 3)
    #expect(model.takeAssignments() == ["count"])
    #expect(countView.invalidations() == 1)
    #expect(labelView.invalidations() == 0)
    #expect(parityView.invalidations() == 0)

    try await core.dispatch(.sequenced(sender: 0, sequence: 0))  // also changes state no prop reads
    await bridge.update()
    #expect(model.count == 4)
    #expect(model.takeAssignments() == ["count", "isEven"])
    #expect(countView.invalidations() == 1)
    #expect(labelView.invalidations() == 0)
    #expect(parityView.invalidations() == 1)
  }

  @Test("repeated equal values, and a value the model already holds, are never assigned")
  @MainActor
  func equalValuesNeverInvalidate() async throws {
    let core = makeCounterCore(Counter(count: 1, label: "a"))
    let model = CounterModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), .prop(\.label, to: \.label), on: model)
    _ = model.takeAssignments()
    let view = TrackedView { _ = (model.count, model.label) }
    for _ in 0..<3 {
      try await core.dispatch(.add(0))
      try await core.dispatch(.setLabel("a"))
      await bridge.update()
      #expect(model.takeAssignments() == [])
      #expect(view.invalidations() == 0)
    }
    // The model set locally to the value the core is about to publish.
    model.count = 2
    #expect(model.takeAssignments() == ["count"])
    #expect(view.invalidations() == 1)
    try await core.dispatch(.increment)
    await bridge.update()
    #expect(model.count == 2)
    #expect(model.takeAssignments() == [])
    #expect(view.invalidations() == 0)
  }

  @Test("a prop that stays NaN is assigned once, not at every change of the state; -0.0 after 0.0 is no change")
  @MainActor
  func notANumber() async throws {
    let core = Core<Reading, ReadingAction>(
      initialState: Reading(),
      reducer: Reduce { state, action in
        switch action {
        case .set(let value): state.value = value
        case .touch: state.touches += 1
        }
      })
    let model = ReadingModel()
    let bridge = await core.bind(.prop(\.value, to: \.value), .prop({ $0.value / 2 }, to: \.half), on: model)
    #expect(model.takeAssignments() == ["value", "half"])
    let view = TrackedView { _ = (model.value, model.half) }

    try await core.dispatch(.set(.nan))
    await bridge.update()
    #expect(model.value.isNaN && model.half.isNaN)
    #expect(model.takeAssignments() == ["value", "half"])
    #expect(view.invalidations() == 1)

    for action in [ReadingAction.set(.nan), .touch, .set(-.nan), .touch] {
      try await core.dispatch(action)
      await bridge.update()
      #expect(model.takeAssignments() == [])
      #expect(view.invalidations() == 0)
    }

    try await core.dispatch(.set(0))
    await bridge.update()
    #expect(model.value == 0)
    #expect(model.takeAssignments() == ["value", "half"])
    #expect(view.invalidations() == 1)

    try await core.dispatch(.set(-0.0))  // equal by ==: documented as no change
    await bridge.update()
    #expect(model.takeAssignments() == [])
    #expect(view.invalidations() == 0)
  }

  @Test("a hand-written model whose every assignment notifies is invalidated only by changes")
  @MainActor
  func notifyingModel() async throws {
    let core = makeCounterCore()
    let model = NotifyingModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), .prop(\.label, to: \.label), on: model)
    let countView = TrackedView { _ = model.count }
    let labelView = TrackedView { _ = model.label }
    try await core.dispatch(.setLabel("b"))
    try await core.dispatch(.add(0))
    await bridge.update()
    #expect(model.label == "b")
    #expect(countView.invalidations() == 0)
    #expect(labelView.invalidations() == 1)
    try await core.dispatch(.increment)
    try await core.dispatch(.setLabel("b"))
    await bridge.update()
    #expect(model.count == 1)
    #expect(countView.invalidations() == 1)
    #expect(labelView.invalidations() == 0)
  }

  @Test("a prop changing back and forth: each change applied is seen; one undone before it was applied is not")
  @MainActor
  func propChangingBackAndForth() async throws {
    let core = makeCounterCore()
    let model = CounterModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), on: model)
    _ = model.takeAssignments()
    let view = TrackedView { _ = model.count }
    for expected in [1, 0, 1, 0] {
      try await core.dispatch(.add(expected == 1 ? 1 : -1))
      await bridge.update()
      #expect(model.count == expected)
      #expect(model.takeAssignments() == ["count"])
      #expect(view.invalidations() == 1)
    }
    // In one publication: the core sees no change and does not call the bridge.
    try await core.dispatch(contentsOf: [.add(1), .add(-1)])
    await bridge.update()
    #expect(model.takeAssignments() == [])
    #expect(view.invalidations() == 0)
  }

  @Test("changes published while the main actor is busy are applied once, with the newest state")
  @MainActor
  func burstAppliedOnce() async throws {
    let core = makeCounterCore()
    let model = CounterModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), on: model)
    _ = model.takeAssignments()
    let view = TrackedView { _ = model.count }
    try await whileMainActorIsBusy {
      // Each dispatch calls the bridge (1, 0, then 2); the main actor applies none yet.
      try await core.dispatch(.increment)
      try await core.dispatch(.add(-1))
      try await core.dispatch(.add(2))
    }
    await bridge.update()
    #expect(model.count == 2)
    #expect(model.takeAssignments() == ["count"])  // once, with 2
    #expect(view.invalidations() == 1)
    try await whileMainActorIsBusy {
      try await core.dispatch(.increment)
      try await core.dispatch(.add(-1))
    }
    await bridge.update()
    #expect(model.count == 2)
    #expect(model.takeAssignments() == [])
    #expect(view.invalidations() == 0)  // 3 was never applied: nothing changed for the view
  }

  @Test("update() applies the state after every action the caller sent before it")
  @MainActor
  func updateAfterSends() async {
    let core = makeCounterCore()
    let model = CounterModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), .prop(\.label, to: \.label), on: model)
    for _ in 0..<100 { core.send(.increment) }
    core.send(.setLabel("sent"))
    await bridge.update()
    #expect((model.count, model.label) == (100, "sent"))
  }

  @Test("the bridge updates the model by itself, on the main actor, without update()")
  @MainActor
  func updatesByItself() async throws {
    let core = makeCounterCore()
    let model = CounterModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), on: model)
    for expected in 1...3 {
      let view = TrackedView { _ = model.count }
      core.send(.increment)
      #expect(await view.nextInvalidation())
      // The invalidation came from inside the bridge's main-actor job, which
      // has ended before this task resumed on the main actor.
      #expect(model.count == expected)
    }
    withExtendedLifetime(bridge) {}
  }

  @Test("a model released with the bridge it holds ends the bridge at once; the core goes on")
  @MainActor
  func modelHoldingItsBridgeReleased() async throws {
    let core = makeCounterCore()
    var model: CounterModel? = CounterModel()
    model?.bridge = await core.bind(.prop(\.count, to: \.count), on: model!)
    weak let released = model
    #expect(core.metrics.observers == 1)
    model = nil
    #expect(released == nil)
    #expect(core.metrics.observers == 0)  // counted out by the bridge's release, before any change
    try await core.dispatch(.increment)
    #expect(await core.state.count == 1)
  }

  @Test("a model released while its bridge is held elsewhere is not kept alive; the bridge ends at the next change")
  @MainActor
  func modelReleasedBridgeHeldElsewhere() async throws {
    let core = makeCounterCore()
    var model: CounterModel? = CounterModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), on: model!)
    weak let released = model
    model = nil
    #expect(released == nil)
    #expect(bridge.isActive)  // nothing has told it yet
    try await core.dispatch(.increment)
    await bridge.update()
    #expect(!bridge.isActive)
    #expect(core.metrics.observers == 0)
    try await core.dispatch(.increment)
    #expect(await core.state.count == 2)
  }

  @Test("a core shut down: the model gets the final props, then the bridge ends")
  @MainActor
  func coreShutDown() async throws {
    let core = makeCounterCore()
    let model = CounterModel()
    let bridge = await core.bind(.prop(\.count, to: \.count), .prop(\.label, to: \.label), on: model)
    for _ in 0..<3 { core.send(.increment) }
    core.send(.setLabel("last"))
    await core.shutdown()
    #expect(!bridge.isActive)
    #expect(core.metrics.observers == 0)
    await bridge.update()
    #expect(model.count == 3)
    #expect(model.label == "last")
    let view = TrackedView { _ = (model.count, model.label) }
    await bridge.update()  // nothing more to apply, and no core to reach
    #expect(view.invalidations() == 0)
  }

  @Test("a bridge does not keep its core alive; the core's release ends it")
  @MainActor
  func coreReleased() async throws {
    var core: CounterCore? = makeCounterCore()
    let model = CounterModel()
    let bridge = await core!.bind(.prop(\.count, to: \.count), on: model)
    try await core!.dispatch(.increment)
    await bridge.update()
    #expect(model.count == 1)
    weak let released = core
    core = nil
    #expect(released == nil)
    #expect(!bridge.isActive)
    await bridge.update()  // returns: there is no core to reach
    #expect(model.count == 1)
  }

  @Test("cancel() and releasing the bridge end it at once; a change staged before cancel() is not applied")
  @MainActor
  func cancelAndRelease() async throws {
    let core = makeCounterCore()
    let model = CounterModel()
    let cancelled = await core.bind(.prop(\.count, to: \.count), on: model)
    let held = Box<ModelBridge?>(await core.bind(.prop(\.label, to: \.label), on: model))
    #expect(core.metrics.observers == 2)
    _ = model.takeAssignments()
    let view = TrackedView { _ = (model.count, model.label) }
    try await whileMainActorIsBusy {
      try await core.dispatch(.increment)  // staged for the main actor, not applied
      try await core.dispatch(.setLabel("b"))
      cancelled.cancel()
      cancelled.cancel()  // a second call does nothing
      held.set(nil)
    }
    #expect(!cancelled.isActive)
    #expect(core.metrics.observers == 0)
    await cancelled.update()
    try await core.dispatch(.increment)
    await cancelled.update()
    #expect((model.count, model.label) == (0, ""))
    #expect(model.takeAssignments() == [])
    #expect(view.invalidations() == 0)
  }

  @Test("two bridges on one model, from two cores: each invalidates its own prop; one ending leaves the other")
  @MainActor
  func twoBridgesOnOneModel() async throws {
    let counter = makeCounterCore()
    let labels = makeCounterCore(Counter(label: "x"))
    let model = CounterModel()
    model.bridges = [
      await counter.bind(.prop(\.count, to: \.count), on: model),
      await labels.bind(.prop(\.label, to: \.label), on: model),
    ]
    #expect((model.count, model.label) == (0, "x"))
    let countView = TrackedView { _ = model.count }
    let labelView = TrackedView { _ = model.label }

    try await counter.dispatch(.setLabel("ignored"))  // not a prop of this bridge
    try await labels.dispatch(.increment)  // nor of this one
    for bridge in model.bridges { await bridge.update() }
    #expect((model.count, model.label) == (0, "x"))
    #expect(countView.invalidations() == 0)
    #expect(labelView.invalidations() == 0)

    try await counter.dispatch(.increment)
    for bridge in model.bridges { await bridge.update() }
    #expect(countView.invalidations() == 1)
    #expect(labelView.invalidations() == 0)

    try await labels.dispatch(.setLabel("y"))
    for bridge in model.bridges { await bridge.update() }
    #expect(countView.invalidations() == 0)
    #expect(labelView.invalidations() == 1)

    await counter.shutdown()
    try await labels.dispatch(.setLabel("z"))
    for bridge in model.bridges { await bridge.update() }
    #expect(!model.bridges[0].isActive)
    #expect(model.bridges[1].isActive)
    #expect((model.count, model.label) == (1, "z"))
  }

  @Test("bind with no prop stops the program with its message")
  func noProp() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      await ModelBridgeTests.bindWithoutProps()
    }
    ProgrammerErrorTests.expectMessage(result, containing: "AsyncCore: bind(_:on:) was given no prop")
  }

  @Test("bind with two props for one property of the model stops the program with its message")
  func twoPropsForOneTarget() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      await ModelBridgeTests.bindTwoPropsToOneTarget()
    }
    ProgrammerErrorTests.expectMessage(
      result,
      containing:
        "AsyncCore: bind(_:on:) was given two props for one property of the model: props 1 and 3, counting from 1")
  }

  @MainActor
  static func bindWithoutProps() async {
    _ = await makeCounterCore().bind(on: CounterModel())
  }

  @MainActor
  static func bindTwoPropsToOneTarget() async {
    _ = await makeCounterCore().bind(
      .prop(\.count, to: \.count), .prop(\.label, to: \.label), .prop({ $0.label.count }, to: \.count),
      on: CounterModel())
  }
}

struct Reading: Sendable {
  var value = 0.0
  var touches = 0
}

enum ReadingAction: Sendable {
  case set(Double)
  case touch
}

/// A model of floating-point props, recording each assignment.
@MainActor @Observable
final class ReadingModel {
  var value = -1.0 { didSet { assignments.append("value") } }
  var half = -1.0 { didSet { assignments.append("half") } }
  @ObservationIgnored var assignments: [String] = []

  func takeAssignments() -> [String] {
    defer { assignments = [] }
    return assignments
  }
}

/// The model a SwiftUI view would read, mirroring the test counter. Its
/// `didSet`s record every assignment, equal values included: what the
/// bridge wrote, beyond what a view is told (since Swift 6.2, `@Observable`
/// itself skips notifying for an equal `Equatable` value).
@MainActor @Observable
final class CounterModel {
  var count = -1 { didSet { assignments.append("count") } }
  var label = "unset" { didSet { assignments.append("label") } }
  var isEven = false { didSet { assignments.append("isEven") } }
  @ObservationIgnored var assignments: [String] = []
  @ObservationIgnored var bridge: ModelBridge?
  @ObservationIgnored var bridges: [ModelBridge] = []

  /// The properties assigned since the last call, in order.
  func takeAssignments() -> [String] {
    defer { assignments = [] }
    return assignments
  }
}

/// A model written without the macro, as `@Observable` expanded before
/// Swift 6.2 and as hand-written `Observable` types often are: every
/// assignment notifies the views that read the property, equal or not.
@MainActor
final class NotifyingModel: Observable {
  private let registrar = ObservationRegistrar()
  private var storedCount = -1
  private var storedLabel = "unset"

  var count: Int {
    get {
      registrar.access(self, keyPath: \.count)
      return storedCount
    }
    set { registrar.withMutation(of: self, keyPath: \.count) { storedCount = newValue } }
  }

  var label: String {
    get {
      registrar.access(self, keyPath: \.label)
      return storedLabel
    }
    set { registrar.withMutation(of: self, keyPath: \.label) { storedLabel = newValue } }
  }
}

/// What SwiftUI does with a view's body: it runs `body` inside
/// `withObservationTracking`, and is told, once, when a property the body
/// read is about to change.
@MainActor
final class TrackedView {
  private let body: @MainActor () -> Void
  private let invalidated = Box(0)
  private let signal = Signal<Void>()

  init(body: @escaping @MainActor () -> Void) {
    self.body = body
    render()
  }

  /// How many times the view was invalidated since it last rendered (0 or
  /// 1: the tracking ends at its first change); renders it again if it was.
  func invalidations() -> Int {
    let count = invalidated.value
    if count > 0 {
      invalidated.set(0)
      render()
    }
    return count
  }

  /// Waits until the view is invalidated; `false` if the test's time limit
  /// cancelled the wait first.
  func nextInvalidation() async -> Bool {
    await signal.next() != nil
  }

  private func render() {
    withObservationTracking(body) { [invalidated, signal] in
      invalidated.set(invalidated.value + 1)
      signal.emit()
    }
  }
}

/// Runs `body` off the main actor while the main actor is held by a job of
/// its own, so that nothing a bridge schedules on the main actor runs until
/// `body` is done.
@concurrent
func whileMainActorIsBusy(_ body: @Sendable () async throws -> Void) async rethrows {
  let holding = Signal<Void>()
  let gate = Gate()
  let holder = Task { @MainActor in
    holding.emit()
    return gate.spinUntilOpen()
  }
  _ = await holding.next()
  defer { gate.open() }
  try await body()
  gate.open()
  #expect(await holder.value, "the main actor was held until the gate opened")
}
