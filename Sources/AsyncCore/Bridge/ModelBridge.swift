/// A bridge's hold on its core: while it is active, the core's changes to
/// the bridged props are assigned to an `@Observable` model on the main
/// actor.
///
/// Made by ``Core/bind(_:on:)``. Keep it in
/// the model, so that it ends with the model:
///
/// ```swift
/// @MainActor @Observable final class CounterModel {
///   var count = 0
///   var step = 1
///   @ObservationIgnored var bridge: ModelBridge?
/// }
///
/// let model = CounterModel()
/// model.bridge = await core.bind(.prop(\.count, to: \.count), .prop(\.step, to: \.step), on: model)
/// ```
///
/// - Important: A bridge ends, and assigns nothing from then on, when
///   - it is cancelled with ``cancel()``, or released (the model that holds
///     it was released);
///   - the core shuts down or is released: the model keeps the props of the
///     final state, which the bridge applies before it goes quiet;
///   - the model was released while the bridge is held elsewhere: the bridge
///     holds the model weakly, finds it gone at the next change of its
///     props, and ends then.
///
///   A bridge keeps neither its model nor its core alive.
public final class ModelBridge: Sendable {
  let connection: any BridgeConnection

  init(connection: any BridgeConnection) {
    self.connection = connection
  }

  deinit {
    connection.end()
  }

  /// Ends the bridge: the model is not assigned again, not even a change
  /// the core published before the call that the main actor has not
  /// applied yet. Calling it again does nothing.
  ///
  /// ```swift
  /// model.bridge?.cancel()
  /// #expect(model.bridge?.isActive == false)
  /// ```
  public func cancel() {
    connection.end()
  }

  /// Whether the core still publishes the bridge's props: `false` once the
  /// bridge was cancelled or released, the core has shut down or been
  /// released, or the bridge found its model released.
  ///
  /// ```swift
  /// await core.shutdown()
  /// #expect(!bridge.isActive)
  /// ```
  public var isActive: Bool { connection.isActive }

  /// Brings the model up to date now: the core reduces every action the
  /// calling task sent before, and the props of the resulting state are
  /// assigned on the main actor before this returns (those that differ from
  /// the model's).
  ///
  /// ```swift
  /// core.send(.increment)
  /// await bridge.update()
  /// #expect(model.count == 1)
  /// ```
  ///
  /// The bridge updates the model by itself, soon after each change; call
  /// this where the next line needs the model to hold the core's state,
  /// as a test does. It does not wait for effects: to include what they
  /// send, `try await core.waitUntilIdle()` first. On a bridge that has
  /// ended it does nothing, except apply the final state of a core that
  /// shut down.
  @MainActor
  public func update() async {
    await connection.update()
  }
}
