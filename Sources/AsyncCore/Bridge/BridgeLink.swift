/// What a bridge's token needs of the link behind it, whatever the model's
/// type: ``ModelBridge`` stays one type a model can store.
protocol BridgeConnection: Sendable {
  /// Whether the core still publishes to the bridge.
  var isActive: Bool { get }
  /// Ends the bridge: nothing is assigned from now on.
  func end()
  /// Applies what the core has published up to now.
  @MainActor func update() async
}

/// The link between one synchronous subscriber in the core and one model
/// on the main actor.
///
/// The first state staged schedules one main-actor job, which applies the
/// newest state staged by then: a burst costs one hop, props that changed
/// together are assigned together, and no older state follows a newer one.
/// Holds the model and the core weakly: a bridge keeps neither alive.
@MainActor
final class BridgeLink<State: Sendable, Model: AnyObject & Sendable>: BridgeConnection {
  /// The subscriber's registration in the core, ended from either side.
  nonisolated let registration: SubscriberRegistration
  nonisolated let outbox = Locked(BridgeOutbox<State>())
  /// Makes the core reduce what it has accepted and publish it; nothing
  /// once the core is gone.
  nonisolated let flushCore: @Sendable () async -> Void
  private weak var model: Model?
  private let props: [BridgedProp<State, Model>]

  init(
    model: Model,
    props: [BridgedProp<State, Model>],
    registration: SubscriberRegistration,
    flushCore: @escaping @Sendable () async -> Void
  ) {
    self.model = model
    self.props = props
    self.registration = registration
    self.flushCore = flushCore
  }

  nonisolated var isActive: Bool { registration.isActive }

  /// Called by the core, inside a publication: keeps `state` for the main
  /// actor, and schedules the job that applies it unless one is pending.
  nonisolated func stage(_ state: State) {
    guard outbox.withLock({ $0.stage(state) }) else { return }
    // The bridge's boundary with the main actor: one short job per burst,
    // holding the link (not the model) until it has run.
    Task { @MainActor in self.applyScheduled() }
  }

  /// The scheduled job, or `bind` as the bridge joins.
  func applyScheduled() {
    apply(outbox.withLock { $0.takeScheduled() })
  }

  /// Applies the newest staged state now, if any.
  func applyPending() {
    apply(outbox.withLock { $0.take() })
  }

  func update() async {
    await flushCore()
    applyPending()
  }

  nonisolated func end() {
    outbox.withLock { $0.end() }
    registration.finish()
  }

  private func apply(_ state: State?) {
    guard let state else { return }
    guard let model else {
      // Released while the bridge was held elsewhere: nothing left to update.
      end()
      return
    }
    // The lock is not held here: an assignment runs observers' `onChange`
    // synchronously, and one may cancel this bridge.
    for prop in props { prop.apply(model, state) }
  }
}

/// The states the core has staged for the main actor: only the newest one
/// counts. A pure state machine; ``BridgeLink`` keeps it under a lock.
struct BridgeOutbox<State> {
  private var staged: State?
  /// Whether a job that will apply the newest state is pending; at first
  /// `bind` itself, which applies the state handed as the bridge joins.
  private var isScheduled = true
  private var isEnded = false

  /// Keeps `state` as the newest; returns whether a main-actor job must be
  /// scheduled to apply it (none is pending, and the bridge has not ended).
  mutating func stage(_ state: State) -> Bool {
    guard !isEnded else { return false }
    staged = state
    guard !isScheduled else { return false }
    isScheduled = true
    return true
  }

  /// The pending job has begun: the next state staged schedules another.
  mutating func takeScheduled() -> State? {
    isScheduled = false
    return take()
  }

  /// The newest state staged, taken, if any.
  mutating func take() -> State? {
    defer { staged = nil }
    return staged
  }

  /// Nothing staged is applied from now on, nor anything staged later.
  mutating func end() {
    isEnded = true
    staged = nil
  }
}
