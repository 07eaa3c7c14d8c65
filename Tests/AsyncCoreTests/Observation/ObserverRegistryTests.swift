import Testing

@testable import AsyncCore

/// The core's observer lists and flags, held in one registry: driven
/// directly, with no core and no task.
@Suite("Observer registry")
struct ObserverRegistryTests {
  typealias Registry = ObserverRegistry<Int, String>

  /// A group of one observer of the whole state, under `key` if given.
  func entry(_ counter: ObserverCounter, policy: BufferingPolicy, key: SelectionKey? = nil) -> (
    Subscription<Int>, AsyncCore.Observer<Int>
  ) {
    let observer = AsyncCore.Observer<Int>(policy: policy, counter: counter)
    let join = GroupJoin<Int>.of(observer, joining: nil, select: { $0 }, isDuplicate: nil)
    join.add(0)
    return (Subscription(publish: join.publish, registrations: join.registrations, key: key), observer)
  }

  @Test("each new entry goes to the list of its policy and kind, and its key finds its group")
  func entriesByPolicyAndKind() {
    let counter = ObserverCounter()
    var registry = Registry()
    #expect(!registry.hasObservers && !registry.hasPerActionObservers)
    let key = SelectionKey(keyPath: \Int.self, policy: .latest, isSubscriber: false)
    let (latest, _) = entry(counter, policy: .latest, key: key)
    registry.countIn()
    registry.add(latest, policy: .latest, isSubscriber: false, isEnding: false)
    #expect(registry.hasObservers && !registry.hasPerActionObservers)
    #expect(registry.latestSubscriptions.count == 1 && registry.group(for: key) === latest.registrations)
    let (subscriber, _) = entry(counter, policy: .latest)
    registry.countIn()
    registry.add(subscriber, policy: .latest, isSubscriber: true, isEnding: true)
    #expect(registry.latestSubscribers.count == 1 && registry.endingSubscriptions.count == 1)
    let (every, _) = entry(counter, policy: .all)
    registry.countIn()
    registry.add(every, policy: .all, isSubscriber: false, isEnding: false)
    #expect(registry.everyStateSubscriptions.count == 1 && registry.hasPerActionObservers)
    #expect(registry.registeredCount == 3 && !registry.hasEnded(counting: counter))
  }

  @Test("pruning drops ended observers, their emptied groups' keys, and the flag once none is left")
  func pruningForgetsEndedGroups() {
    let counter = ObserverCounter()
    var registry = Registry()
    let key = SelectionKey(keyPath: \Int.self, policy: .all, isSubscriber: false)
    let (every, observer) = entry(counter, policy: .all, key: key)
    registry.countIn()
    registry.add(every, policy: .all, isSubscriber: false, isEnding: true)
    let log = AsyncCore.Observer<ActionRecord<Int, String>>(policy: .all, counter: counter)
    registry.addActionObserver(log)
    #expect(registry.registeredCount == 2)
    observer.cancel()
    #expect(registry.hasEnded(counting: counter))
    registry.removeEnded()
    #expect(registry.everyStateSubscriptions.isEmpty && registry.endingSubscriptions.isEmpty)
    #expect(registry.group(for: key) == nil)
    #expect(registry.registeredCount == 1 && registry.hasObservers && registry.hasPerActionObservers)
    log.cancel()
    registry.removeEnded()
    #expect(registry.registeredCount == 0 && !registry.hasObservers && !registry.hasEnded(counting: counter))
  }

  @Test("a group is forgotten by its key only while it is still the one registered there")
  func forgetGroupOnlyIfStill() {
    let counter = ObserverCounter()
    var registry = Registry()
    let key = SelectionKey(keyPath: \Int.self, policy: .latest, isSubscriber: false)
    let (first, _) = entry(counter, policy: .latest, key: key)
    let (second, _) = entry(counter, policy: .latest, key: key)
    registry.add(second, policy: .latest, isSubscriber: false, isEnding: false)
    registry.forgetGroup(key, ifStill: first.registrations)
    #expect(registry.group(for: key) === second.registrations)
    registry.forgetGroup(key, ifStill: second.registrations)
    #expect(registry.group(for: key) == nil)
  }

  @Test("finishing ends every observer after what it has not taken, and empties the registry")
  func finishAndRemoveAll() async {
    let counter = ObserverCounter()
    var registry = Registry()
    let (latest, observer) = entry(counter, policy: .latest)
    registry.countIn()
    registry.add(latest, policy: .latest, isSubscriber: false, isEnding: false)
    registry.hasPruner = true
    registry.finishAndRemoveAll()
    #expect(registry.latestSubscriptions.isEmpty && !registry.hasObservers && registry.registeredCount == 0)
    #expect(registry.hasPruner, "the counter keeps its pruner")
    #expect(counter.value.load(ordering: .relaxed) == 0)
    let stream = CoreStream(observer: observer)
    var values: [Int] = []
    for await value in stream { values.append(value) }
    #expect(values == [0])
  }
}
