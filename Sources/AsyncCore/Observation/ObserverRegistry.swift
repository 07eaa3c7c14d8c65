import Synchronization

/// A core's observers and subscribers, by how they are published: the
/// latest-value ones once per drained batch, the every-state ones and the
/// action log once per action. Not `Sendable`: a stored property of the core,
/// touched only by its synchronous code (what observers share with it is the
/// core's `observerCounter`). Registering goes through one path,
/// `Core.attach(key:policy:isSubscriber:life:endedBy:api:join:)`.
///
/// A struct inline in the core, so the publishing paths follow no pointer.
@usableFromInline
struct ObserverRegistry<State: Sendable, Action: Sendable> {
  /// Latest-value observers (`for await`), published once per batch.
  @usableFromInline var latestSubscriptions: [Subscription<State>] = []
  /// Every-state observers and subscribers, published after each action.
  @usableFromInline var everyStateSubscriptions: [Subscription<State>] = []
  /// The action log's observers and the recorders, given a record of each
  /// action. One list for both: a recorder adds no field to every core.
  @usableFromInline var actionObservers: [ActionSink<State, Action>] = []
  /// Latest-value synchronous subscribers, called once per publication.
  @usableFromInline var latestSubscribers: [Subscription<State>] = []
  /// The entries above made with a key path, by key path and kind: a new
  /// registration with the same key path joins its group.
  @usableFromInline var groupsByKey: [SelectionKey: any Registrations] = [:]
  /// The entries (also in the lists above) of children that can leave the
  /// state: published the state before the removing action, so each gets its
  /// child's last value (see Core+Scope.swift).
  @usableFromInline var endingSubscriptions: [Subscription<State>] = []
  /// How many observers and subscribers the lists hold: when it differs
  /// from the core's `observerCounter`, one has ended and the lists are pruned.
  @usableFromInline var registeredCount = 0
  /// Whether `counter` has the core's pruner, set with the first
  /// registration (see `Core.prepareRegistration`).
  @usableFromInline var hasPruner = false

  @inlinable
  init() {}

  /// Whether any of the lists is non-empty: a core without observers reads
  /// this one count instead of five lists.
  @inlinable
  var hasObservers: Bool { registeredCount > 0 }

  /// Whether an every-state observer, an action log or a recorder is
  /// registered: then each action is published on its own.
  @inlinable
  var hasPerActionObservers: Bool {
    hasObservers && (!actionObservers.isEmpty || !everyStateSubscriptions.isEmpty)
  }

  /// Whether an observer or subscriber has ended since the last prune,
  /// given the core's shared count: one atomic load.
  @inlinable
  func hasEnded(counting counter: ObserverCounter) -> Bool {
    registeredCount != counter.value.load(ordering: .relaxed)
  }

  /// The group registered under `key`, if any.
  @inlinable
  func group(for key: SelectionKey?) -> (any Registrations)? {
    guard let key else { return nil }
    return groupsByKey[key]
  }

  /// Counts in one new observer or subscriber (of a new group or not).
  @inlinable
  mutating func countIn() {
    registeredCount += 1
  }

  /// Adds the entry of a new group, to the list its policy and kind say,
  /// found by `entry.key` from now on; `isEnding`: its child can leave the
  /// state.
  @inlinable
  mutating func add(_ entry: Subscription<State>, policy: BufferingPolicy, isSubscriber: Bool, isEnding: Bool) {
    switch policy {
    case .latest where isSubscriber: latestSubscribers.append(entry)
    case .latest: latestSubscriptions.append(entry)
    case .all: everyStateSubscriptions.append(entry)
    }
    if let key = entry.key { groupsByKey[key] = entry.registrations }
    if isEnding { endingSubscriptions.append(entry) }
  }

  /// Adds an action log observer, counted in.
  mutating func addActionObserver(_ observer: Observer<ActionRecord<State, Action>>) {
    actionObservers.append(.log(observer))
    countIn()
  }

  /// Adds a recorder, counted in.
  mutating func addRecorder(_ recorder: RecorderStorage<State, Action>) {
    actionObservers.append(.recorder(recorder))
    countIn()
  }

  /// Forgets the group under `key` if it is still `registrations`: a new
  /// registration with that key starts a group of its own.
  mutating func forgetGroup(_ key: SelectionKey, ifStill registrations: any Registrations) {
    if let registered = groupsByKey[key], registered === registrations {
      groupsByKey[key] = nil
    }
  }

  /// Frees the storage of registrations already ended and counted out.
  @usableFromInline
  mutating func removeEnded() {
    var registered = 0
    Self.removeEnded(from: &latestSubscriptions, forgetting: &groupsByKey, counting: &registered)
    Self.removeEnded(from: &everyStateSubscriptions, forgetting: &groupsByKey, counting: &registered)
    Self.removeEnded(from: &latestSubscribers, forgetting: &groupsByKey, counting: &registered)
    if !endingSubscriptions.isEmpty {
      // Also in the lists above, where they were counted and pruned.
      endingSubscriptions.removeAll { $0.registrations.removeEnded() == 0 }
    }
    actionObservers.removeAll { !$0.isActive }
    registeredCount = registered + actionObservers.count
  }

  /// Drops ended members from each entry, and entries left empty (with
  /// their key, so the next registration of that key path starts afresh).
  private static func removeEnded(
    from subscriptions: inout [Subscription<State>],
    forgetting groupsByKey: inout [SelectionKey: any Registrations],
    counting registered: inout Int
  ) {
    subscriptions.removeAll { subscription in
      let left = subscription.registrations.removeEnded()
      registered += left
      if left == 0, let key = subscription.key { groupsByKey[key] = nil }
      return left == 0
    }
  }

  /// Ends every observer's loop after what it has not taken yet (and every
  /// subscription); the lists stay as they are.
  func finishAll() {
    for list in [latestSubscriptions, everyStateSubscriptions, latestSubscribers] {
      for subscription in list { subscription.registrations.finish() }
    }
    for sink in actionObservers { sink.finish() }
  }

  /// Ends everything, as `finishAll()`, and forgets it.
  mutating func finishAndRemoveAll() {
    finishAll()
    let hasPruner = hasPruner
    self = ObserverRegistry()
    self.hasPruner = hasPruner
  }
}

/// One entry of the action log's list: an observer of ``Core/actions(buffering:)``
/// or a recorder (``Core/record(last:)``). Two class payloads: the enum is
/// one pointer.
@usableFromInline
enum ActionSink<State: Sendable, Action: Sendable> {
  case log(Observer<ActionRecord<State, Action>>)
  case recorder(RecorderStorage<State, Action>)

  /// Hands it `record`: an observer the whole record, a recorder the
  /// action and the state after it.
  @inlinable
  func deliver(_ record: ActionRecord<State, Action>) {
    switch self {
    case .log(let observer): observer.deliver(record)
    case .recorder(let recorder): recorder.deliver(record)
    }
  }

  /// Whether it still takes records (the core drops it once not).
  var isActive: Bool {
    switch self {
    case .log(let observer): observer.isActive
    case .recorder(let recorder): recorder.isRecording
    }
  }

  /// The core has ended: an observer's loop ends after what it has not
  /// taken; a recorder keeps what it holds.
  func finish() {
    switch self {
    case .log(let observer): observer.finish()
    case .recorder(let recorder): recorder.stop()
    }
  }
}

// Never sent anywhere: it belongs to one core and lives in its isolation.
@available(*, unavailable)
extension ObserverRegistry: Sendable {}

/// What one new observer or subscriber brings to its core: its group, how
/// to publish to it, add the member and end it. Built in inlinable code, so
/// selector and comparison are compiled for the client's types; `Input` is
/// the core's state, or a child's (`nil` once the child is gone).
@usableFromInline
struct GroupJoin<Input>: Sendable {
  /// The group, for pruning and finishing.
  @usableFromInline let registrations: any Registrations
  /// Publishes to the group.
  @usableFromInline let publish: @Sendable (Input) -> Void
  /// Adds the new member, which gets its first value from the input.
  @usableFromInline let add: @Sendable (Input) -> Void
  /// Ends the new member: the core has stopped, or the child is gone.
  @usableFromInline let finishMember: @Sendable () -> Void

  @inlinable
  init(
    registrations: any Registrations,
    publish: @escaping @Sendable (Input) -> Void,
    add: @escaping @Sendable (Input) -> Void,
    finishMember: @escaping @Sendable () -> Void
  ) {
    self.registrations = registrations
    self.publish = publish
    self.add = add
    self.finishMember = finishMember
  }

  /// The join of `member`, to `existing` if it is a group of the same
  /// kind, else to a new group selecting with `select`.
  @inlinable
  static func of<Member: GroupMember>(
    _ member: Member,
    joining existing: (any Registrations)?,
    select: @escaping @Sendable (Input) -> Member.Props,
    isDuplicate: (@Sendable (Member.Props, Member.Props) -> Bool)?
  ) -> GroupJoin {
    let group =
      existing as? SelectionGroup<Input, Member> ?? SelectionGroup(select: select, isDuplicate: isDuplicate)
    return GroupJoin(
      registrations: group, publish: { group.publish($0) }, add: { group.add(member, at: $0) },
      finishMember: { member.finish() })
  }

  /// The same join, published what `read` finds in a `Root` (a handle's
  /// child in its core's state).
  @inlinable
  func reading<Root>(_ read: @escaping @Sendable (Root) -> Input) -> GroupJoin<Root> {
    let publish = self.publish
    let add = self.add
    return GroupJoin<Root>(
      registrations: registrations, publish: { publish(read($0)) }, add: { add(read($0)) },
      finishMember: finishMember)
  }
}
