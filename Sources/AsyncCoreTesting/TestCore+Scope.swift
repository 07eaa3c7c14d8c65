import AsyncCore
import Testing

extension TestCore {
  /// A handle on a child feature of this test core: it sends the child's
  /// actions and receives them through the test core, with `assert:`
  /// closures on the child's state.
  ///
  /// ```swift
  /// let counter = store.scope(state: \.counter, action: AppAction.counterCase)
  /// await counter.send(.increment) { $0.count = 1 }   // $0 is the counter
  /// #expect(counter.state.count == 1)
  /// await store.finish()
  /// ```
  ///
  /// The parent's reducer runs as in the app (a child handle of a `Core` sends
  /// into the core the same way). Each action is embedded with `action` and
  /// checked as the parent's `send` or `receive` would check it: against
  /// the whole state, so a change outside the child that the test did not
  /// describe fails, with the parent's paths (`counter.count`); it counts
  /// for the parent's exhaustive checks, and its failures name the
  /// parent's action (`send(.counter(.increment))`).
  ///
  /// - Parameters:
  ///   - state: Where the child's state is in the parent's: a writable key
  ///     path, as the `assert:` closures change it. For a child inside an
  ///     optional or a collection, a key path that reaches it (`\.detail!`,
  ///     `\.rows[0]`) while it is there.
  ///   - action: The parent's case that carries the child's actions: the
  ///     same `ActionCase` that places the child's reducer and scopes a
  ///     `Core` to it (the handle only embeds with it).
  /// - Returns: The handle; it keeps the test core alive.
  public func scope<ChildState, ChildAction: Sendable>(
    state: WritableKeyPath<State, ChildState>,
    action: ActionCase<Action, ChildAction>
  ) -> Scope<ChildState, ChildAction> {
    Scope(store: self, path: state, embed: action.embed)
  }

  /// A child feature of a ``TestCore``, made by ``TestCore/scope(state:action:)``:
  /// sends and receives the child's actions through the test core.
  ///
  /// ```swift
  /// let detail = store.scope(state: \.detail!, action: AppAction.detailCase)
  /// await detail.send(.favouriteTapped) { $0.isFavourite = true }
  /// await detail.receive(.saved) { $0.isSaving = false }
  /// ```
  ///
  /// Every check is the test core's: see ``TestCore/scope(state:action:)``.
  public struct Scope<ChildState, ChildAction: Sendable> {
    let store: TestCore
    let path: WritableKeyPath<State, ChildState>
    let embed: (ChildAction) -> Action

    /// The child's state in the test core's ``TestCore/state``.
    ///
    /// ```swift
    /// await counter.send(.increment) { $0.count = 1 }
    /// #expect(counter.state.count == 1)
    /// ```
    public var state: ChildState { store.state[keyPath: path] }

    /// Sends the child action `action`, embedded in the parent's, and checks
    /// the change as ``TestCore/send(_:assert:sourceLocation:)`` does, with
    /// the `assert:` closure on the child's state.
    ///
    /// ```swift
    /// await counter.send(.increment) { $0.count = 1 }
    /// let timer = await counter.send(.startTimer) { $0.isTiming = true }
    /// await timer.cancel()
    /// ```
    ///
    /// - Parameters:
    ///   - action: The child's action.
    ///   - update: The `assert:` closure: mutates the child's state before the
    ///     action into the one expected after it (the rest of the state is
    ///     expected to stay as it was). Leave it out when nothing changes.
    ///   - sourceLocation: Where a failure is recorded; leave the default.
    /// - Returns: The effects this action started; see ``TestEffectHandle``.
    @discardableResult
    public nonisolated(nonsending) func send(
      _ action: ChildAction,
      assert update: ((_ state: inout ChildState) throws -> Void)? = nil,
      sourceLocation: SourceLocation = #_sourceLocation
    ) async -> TestEffectHandle {
      await store.send(embed(action), assert: lifted(update), sourceLocation: sourceLocation)
    }

    /// Asserts that the next action effects sent is the child action
    /// `action`, embedded in the parent's, and checks the state it left as
    /// ``TestCore/receive(_:timeout:assert:sourceLocation:)`` does, with the
    /// `assert:` closure on the child's state.
    ///
    /// ```swift
    /// await detail.send(.favouriteTapped) { $0.isSaving = true }
    /// await detail.receive(.saved) { $0.isSaving = false }
    /// ```
    ///
    /// - Parameters:
    ///   - action: The child action expected next, compared (embedded) with
    ///     `==`.
    ///   - timeout: How long to wait, in real time; by default the test
    ///     core's ``TestCore/timeout``.
    ///   - update: The `assert:` closure: mutates the child's state before the
    ///     action into the one expected after it.
    ///   - sourceLocation: Where a failure is recorded; leave the default.
    public nonisolated(nonsending) func receive(
      _ action: ChildAction,
      timeout: Duration? = nil,
      assert update: ((_ state: inout ChildState) throws -> Void)? = nil,
      sourceLocation: SourceLocation = #_sourceLocation
    ) async where Action: Equatable {
      await store.receive(embed(action), timeout: timeout, assert: lifted(update), sourceLocation: sourceLocation)
    }

    /// A handle on a child of this child, as ``TestCore/scope(state:action:)``
    /// makes one on a child of the test core.
    ///
    /// ```swift
    /// let detail = store.scope(state: \.detail!, action: AppAction.detailCase)
    /// let photos = detail.scope(state: \.photos, action: DetailAction.photosCase)
    /// await photos.send(.next) { $0.index = 1 }   // sent as .detail(.photos(.next))
    /// ```
    ///
    /// - Parameters:
    ///   - state: Where the grandchild's state is in this child's.
    ///   - action: This child's case that carries the grandchild's actions.
    public func scope<GrandchildState, GrandchildAction: Sendable>(
      state: WritableKeyPath<ChildState, GrandchildState>,
      action: ActionCase<ChildAction, GrandchildAction>
    ) -> TestCore.Scope<GrandchildState, GrandchildAction> {
      let embed = self.embed
      let embedHere = action.embed
      return TestCore.Scope(store: store, path: path.appending(path: state), embed: { embed(embedHere($0)) })
    }

    /// `update` on the child, as an update of the whole state.
    private func lifted(
      _ update: ((inout ChildState) throws -> Void)?
    ) -> ((inout State) throws -> Void)? {
      guard let update else { return nil }
      let path = self.path
      return { state in try update(&state[keyPath: path]) }
    }
  }
}
