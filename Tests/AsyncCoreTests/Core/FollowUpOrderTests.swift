import AsyncCore
import Testing

/// `.send` effects are reduced right after the action that
/// returned them, before any other action, breadth first, every run.
@Suite("Order of synchronous follow-ups", .hangDetector)
struct FollowUpOrderTests {
  enum Action: String, Sendable, Hashable {
    case a, b, c, d, x
  }

  /// How `A` returns its two sends and `B` its one.
  enum Shape: String, CaseIterable, Sendable {
    case merge
    /// A `.concatenate` made only of sends.
    case concatenate
    /// Sends wrapped in `.cancellable`.
    case cancellable
    /// Sends merged with asynchronous work, all cancellable in flight (the
    /// search pattern): the sends are still synchronous.
    case cancellableWithRun
    /// A `.concatenate` of sends and a cancel: no `.run`, so synchronous.
    case concatenateWithCancel

    var fromA: Effect<Action> {
      switch self {
      case .merge: .merge([.send(.b), .send(.c)])
      case .concatenate: .concatenate([.send(.b), .send(.c)])
      case .cancellable: Effect.merge([.send(.b), .send(.c)]).cancellable(id: "sends")
      case .cancellableWithRun:
        Effect.merge([.send(.b), .run { _ in }, .send(.c)]).cancellable(id: "load", cancelInFlight: true)
      case .concatenateWithCancel: .concatenate([.send(.b), .cancel(id: "other"), .send(.c)])
      }
    }

    var fromB: Effect<Action> {
      switch self {
      case .merge, .concatenate, .concatenateWithCancel: .send(.d)
      case .cancellable, .cancellableWithRun: Effect.send(.d).cancellable(id: "send")
      }
    }
  }

  /// Logs every action; `A` returns merge(send B, send C), `B` returns send D.
  static func makeCore(shape: Shape) -> Core<[Action], Action> {
    Core(initialState: []) { log, action in
      log.append(action)
      switch action {
      case .a: return shape.fromA
      case .b: return shape.fromB
      case .c, .d, .x: return .none
      }
    }
  }

  @Test("A, B, C, D, and only then an action sent after dispatch(A) returned (200 runs)", arguments: Shape.allCases)
  func breadthFirstBeforeAnythingElse(shape: Shape) async throws {
    var orders: [[Action]: Int] = [:]
    for _ in 0..<200 {
      let core = Self.makeCore(shape: shape)
      try await core.dispatch(.a)
      core.send(.x)
      orders[await core.state, default: 0] += 1
    }
    #expect(orders == [[.a, .b, .c, .d, .x]: 200])
  }

  @Test("dispatch(A) returns with B, C and D reduced and published; state read right after includes them (200 runs)")
  func dispatchReturnsAfterItsSends() async throws {
    var published: [[Action]: Int] = [:]
    var read: [[Action]: Int] = [:]
    for _ in 0..<200 {
      let core = Self.makeCore(shape: .merge)
      var states = await core.observe({ $0 }).makeAsyncIterator()
      #expect(await states.next() == [])
      try await core.dispatch(.a)
      // The newest state published by the time dispatch returned (.latest keeps only the newest).
      published[await states.next() ?? [], default: 0] += 1
      read[await core.state, default: 0] += 1
    }
    #expect(published == [[.a, .b, .c, .d]: 200])
    #expect(read == [[.a, .b, .c, .d]: 200])
  }
}
