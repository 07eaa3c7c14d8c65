import AsyncCore
import Testing

/// Programmer errors stop the program with a
/// message that starts with "AsyncCore:", in debug and release builds.
///
/// Each runs in a child process (an exit test); run the suite in a release
/// build too, where `precondition` would drop the message.
@Suite("Programmer errors stop with a message", .hangDetector)
struct ProgrammerErrorTests {
  /// A closure the core calls synchronously, inside its isolation.
  enum Place: String, Codable, Sendable, CaseIterable {
    case reducer
    case selector
    case removeDuplicates
    case subscriber
  }

  /// How that closure reaches back into its own core.
  enum Reach: String, Codable, Sendable, CaseIterable {
    case updateDependencies
    case cancelEffects
    case addMiddleware

    func perform(on core: Core<Int, Int>) {
      core.assumeIsolated { core in
        switch self {
        case .updateDependencies: core.updateDependencies { _ in }
        case .cancelEffects: core.cancelEffects(id: 1)
        case .addMiddleware: core.addMiddleware { _, _, _ in .pass }
        }
      }
    }
  }

  /// Checks what the child process wrote to standard error.
  static func expectMessage(
    _ result: ExitTest.Result?,
    containing fragment: String = "AsyncCore:",
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard let result else { return }  // the exit expectation has already failed
    let standardError = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(standardError.contains(fragment), "standard error: \(standardError)", sourceLocation: sourceLocation)
  }

  // MARK: - Reaching back into the core

  @Test(
    "a reducer, selector, removeDuplicates: closure or subscriber reaching back into its core stops the program",
    arguments: Place.allCases,
    Reach.allCases
  )
  func reachingBackIntoTheCore(place: Place, reach: Reach) async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [place, reach] in
      let reference = WeakBox<Core<Int, Int>>()
      let core = Core<Int, Int>(
        initialState: 0,
        reducer: Reduce { state, action in
          state += action
          if place == .reducer, let core = reference.object { reach.perform(on: core) }
        })
      reference.set(core)
      switch place {
      case .reducer:
        _ = try? await core.dispatch(1)
      case .selector:
        // The selector first runs as the observer registers.
        let stream = await core.observe { (count: Int) -> Int in
          if let core = reference.object { reach.perform(on: core) }
          return count
        }
        _ = try? await core.dispatch(1)
        withExtendedLifetime(stream) {}
      case .removeDuplicates:
        // The comparison first runs at the first publication after registration.
        let stream = await core.observe(
          { $0 },
          removeDuplicates: { (previous: Int, next: Int) -> Bool in
            if let core = reference.object { reach.perform(on: core) }
            return previous == next
          })
        _ = try? await core.dispatch(1)
        _ = await core.state  // publishes what the dispatch left to the drain
        withExtendedLifetime(stream) {}
      case .subscriber:
        // A subscriber is first called as it subscribes.
        let subscriber = await core.subscribe(
          to: { $0 },
          { (_: Int) in
            if let core = reference.object { reach.perform(on: core) }
          })
        withExtendedLifetime(subscriber) {}
      }
    }
    Self.expectMessage(result)
  }

  // MARK: - Iterating a CoreStream twice

  @Test("iterating a CoreStream twice stops the program with its message")
  func secondIterationKeepsItsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = Core<Int, Int>(initialState: 0, reducer: Reduce { state, action in state += action })
      let stream = await core.states()
      _ = stream.makeAsyncIterator()
      _ = stream.makeAsyncIterator()
    }
    Self.expectMessage(result, containing: "AsyncCore: a CoreStream is consumed by one loop")
  }

  @Test("asyncStream() of a CoreStream already iterated stops the program with its message")
  func asyncStreamAfterIterationKeepsItsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = Core<Int, Int>(initialState: 0, reducer: Reduce { state, action in state += action })
      let stream = await core.states()
      _ = stream.makeAsyncIterator()
      _ = stream.asyncStream()
    }
    Self.expectMessage(result, containing: "AsyncCore: a CoreStream is consumed by one loop")
  }

  @Test("run() from inside one of the core's own effects stops the program with its message")
  func runFromInsideAnEffect() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let weak = WeakBox<Core<Int, Int>>()
      let core = Core<Int, Int>(initialState: 0) { _, _ in
        .run { _ in try? await weak.object?.run() }
      }
      weak.set(core)
      try? await core.dispatch(1).finish()
    }
    Self.expectMessage(result, containing: "AsyncCore: run() was called from inside one of this core's own effects")
  }

  // MARK: - Recording

  @Test("a recording limit below 1 stops the program with its message")
  func recordingLimitBelowOne() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = Core<Int, Int>(initialState: 0, reducer: Reduce { state, action in state += action })
      _ = await core.record(last: 0)
    }
    Self.expectMessage(result, containing: "AsyncCore: Core.record(last: 0): a recording keeps at least 1 action")
  }
}
