import AsyncCore

/// The counter most tests drive: a count, a label that observers of the
/// count must not be woken for, and a per-sender log to check ordering.
struct Counter: Sendable, Equatable {
  var count = 0
  var label = ""
  /// The last sequence number reduced for each sender.
  var lastSequence: [Int: Int] = [:]
  /// Actions reduced out of their sender's order.
  var outOfOrder = 0
}

enum CounterAction: Sendable, Equatable {
  case increment
  case add(Int)
  case setLabel(String)
  /// Sender `sender`'s action number `sequence` (0, 1, 2, …).
  case sequenced(sender: Int, sequence: Int)
}

func reduceCounter(_ state: inout Counter, _ action: CounterAction) {
  switch action {
  case .increment:
    state.count += 1
  case .add(let amount):
    state.count += amount
  case .setLabel(let label):
    state.label = label
  case .sequenced(let sender, let sequence):
    if sequence != state.lastSequence[sender, default: -1] + 1 { state.outOfOrder += 1 }
    state.lastSequence[sender] = sequence
    state.count += 1
  }
}

typealias CounterCore = Core<Counter, CounterAction>

func makeCounterCore(_ initialState: Counter = Counter()) -> CounterCore {
  Core(initialState: initialState, reducer: Reduce(reduceCounter))
}

/// Consumes `stream` in its own task and returns every element it received.
func collect<Element: Sendable>(_ stream: CoreStream<Element>) -> Task<[Element], Never> {
  Task {
    var received: [Element] = []
    for await element in stream { received.append(element) }
    return received
  }
}
