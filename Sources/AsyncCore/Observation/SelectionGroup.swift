import Synchronization

/// The registrations behind one publication entry, sharing one selector
/// and comparison: same key path and policy, one group, one comparison per
/// publication; a closure selector gets a group of its own. Members are
/// walked through a local copy of the array, so a publication retains
/// nothing per member.
@usableFromInline
final class SelectionGroup<State, Member: GroupMember>: Registrations {
  @usableFromInline typealias Props = Member.Props

  @usableFromInline let select: @Sendable (State) -> Props
  @usableFromInline let isDuplicate: (@Sendable (Props, Props) -> Bool)?
  // Both variables below are touched only from their core's isolation, one
  // access at a time: user code run while publishing stops the program if it
  // reaches its core, and consumers never touch a group. So the dynamic
  // exclusivity check could only pass, and is left off.
  /// The last value let through to the members.
  // Safety: touched only from the core's isolation, one access at a time (above).
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var last: Props?
  // Safety: touched only from the core's isolation, one access at a time (above).
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var members: ContiguousArray<Member> = []

  @inlinable
  init(select: @escaping @Sendable (State) -> Props, isDuplicate: (@Sendable (Props, Props) -> Bool)?) {
    self.select = select
    self.isDuplicate = isDuplicate
  }

  /// Hands every member the selected value, unless it duplicates the last
  /// one let through.
  @inlinable
  func publish(_ state: State) {
    let props = select(state)
    guard update(to: props) else { return }
    let members = members
    for member in members { member.receive(props, isDuplicate: isDuplicate) }
  }

  /// Joins `member`: the others first get the current value if it changed,
  /// then it gets the current value as its first.
  @inlinable
  func add(_ member: Member, at state: State) {
    let props = select(state)
    if update(to: props) {
      for other in members { other.receive(props, isDuplicate: isDuplicate) }
    }
    member.receive(props, isDuplicate: isDuplicate)
    members.append(member)
  }

  /// Lets `props` through, unless it duplicates the last one let through;
  /// returns whether it did.
  @inlinable
  func update(to props: Props) -> Bool {
    if let last, isDuplicate?(last, props) == true { return false }
    last = props
    return true
  }

  @usableFromInline
  func removeEnded() -> Int {
    members.removeAll { !$0.isActive }
    return members.count
  }

  @usableFromInline
  func finish() {
    for member in members { member.finish() }
  }
}

/// One registration in a group: a `for await` observer or a synchronous
/// subscriber.
@usableFromInline
protocol GroupMember: Sendable {
  associatedtype Props: Sendable
  /// A publication: deliver `props`, or call with it.
  func receive(_ props: Props, isDuplicate: (@Sendable (Props, Props) -> Bool)?)
  /// `false` once either side has ended; the core then drops it.
  var isActive: Bool { get }
  /// The core has ended.
  func finish()
}

extension Observer: GroupMember {
  @inlinable
  func receive(_ props: Element, isDuplicate: (@Sendable (Element, Element) -> Bool)?) {
    deliver(props, isDuplicate: isDuplicate)
  }
}

/// One synchronous subscriber: whether it is still subscribed, and its
/// callback.
@usableFromInline
struct SubscriberMember<Props: Sendable>: GroupMember {
  @usableFromInline let registration: SubscriberRegistration
  @usableFromInline let body: @Sendable (Props) -> Void

  @inlinable
  init(registration: SubscriberRegistration, body: @escaping @Sendable (Props) -> Void) {
    self.registration = registration
    self.body = body
  }

  /// Calls the subscriber, unless it has ended (possibly during this
  /// publication, by another subscriber's call).
  @inlinable
  func receive(_ props: Props, isDuplicate: (@Sendable (Props, Props) -> Bool)?) {
    if registration.isSubscribed { body(props) }
  }

  @inlinable
  var isActive: Bool { registration.isActive }

  @inlinable
  func finish() { registration.finish() }
}
