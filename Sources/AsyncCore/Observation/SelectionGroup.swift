import Synchronization

// The registrations behind one publication entry. Observers or subscribers
// made with the same key path and policy share one group, so their selector
// and comparison run once per publication however many there are; one made
// with a closure selector has a group of its own.
//
// Safety (for every `nonisolated(unsafe)` property of both groups): they
// are read and written only from their core's isolation (registering,
// publishing, pruning, finishing), one access at a time: no access spans a
// call back into the core, because user code run while publishing (a
// selector, a comparison, a subscriber) stops the program if it reaches its
// core. The consumer's side never touches a group. Exclusivity is left
// unchecked for the same reason: the dynamic check could only pass.

/// `for await` observers sharing one selection.
@usableFromInline
final class ObserverGroup<State, Props: Sendable>: Registrations {
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var selection: Selection<State, Props>
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var observers: ContiguousArray<Observer<Props>> = []

  @inlinable
  init(selection: Selection<State, Props>) {
    self.selection = selection
  }

  /// Delivers the selected value to every observer, unless it duplicates
  /// the last one delivered.
  @inlinable
  func publish(_ state: State) {
    guard let props = selection.change(in: state) else { return }
    let isDuplicate = selection.isDuplicate
    // A local copy: the loop borrows each element, with no retain and
    // release per observer (the same in `SubscriberGroup.publish`).
    let observers = observers
    for observer in observers { observer.deliver(props, isDuplicate: isDuplicate) }
  }

  /// Joins `observer`: the others first get the current value if it
  /// changed, then it gets the current value as its first.
  @inlinable
  func add(_ observer: Observer<Props>, at state: State) {
    let props = selection.select(state)
    if selection.update(to: props) {
      for other in observers { other.deliver(props, isDuplicate: selection.isDuplicate) }
    }
    observer.deliver(props, isDuplicate: selection.isDuplicate)
    observers.append(observer)
  }

  @usableFromInline
  func removeEnded() -> Int {
    observers.removeAll { !$0.isActive }
    return observers.count
  }

  @usableFromInline
  func finish() {
    for observer in observers { observer.finish() }
  }
}

/// One synchronous subscriber in a group: whether it is still subscribed,
/// and its callback.
@usableFromInline
struct SubscriberMember<Props>: Sendable {
  @usableFromInline let registration: SubscriberRegistration
  @usableFromInline let body: @Sendable (Props) -> Void

  @inlinable
  init(registration: SubscriberRegistration, body: @escaping @Sendable (Props) -> Void) {
    self.registration = registration
    self.body = body
  }
}

/// Synchronous subscribers sharing one selection.
@usableFromInline
final class SubscriberGroup<State, Props: Sendable>: Registrations {
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var selection: Selection<State, Props>
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var members: ContiguousArray<SubscriberMember<Props>> =
    []

  @inlinable
  init(selection: Selection<State, Props>) {
    self.selection = selection
  }

  /// Calls every subscriber still subscribed with the selected value,
  /// unless it duplicates the last one they were called with.
  @inlinable
  func publish(_ state: State) {
    guard let props = selection.change(in: state) else { return }
    let members = members
    for member in members where member.registration.isSubscribed { member.body(props) }
  }

  /// Joins `member`: the others are first called with the current value if
  /// it changed, then it is called with the current value.
  @inlinable
  func add(_ member: SubscriberMember<Props>, at state: State) {
    let props = selection.select(state)
    if selection.update(to: props) {
      for other in members where other.registration.isSubscribed { other.body(props) }
    }
    member.body(props)
    members.append(member)
  }

  @usableFromInline
  func removeEnded() -> Int {
    members.removeAll { !$0.registration.isActive }
    return members.count
  }

  @usableFromInline
  func finish() {
    for member in members { member.registration.finish() }
  }
}
