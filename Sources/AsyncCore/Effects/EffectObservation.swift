/// What a test's clock can learn about the effects of cores: which effect
/// the calling task runs in, their start order, and when one has finished.
/// `ManualClock` reaches the core through this alone. Nothing is paid while
/// nobody observes: the start order is the token's generation, and an end
/// observer pins its effect onto the slow finish path.
package enum EffectObservation {
  /// A place in the order effects were registered, across every core of the
  /// process.
  ///
  /// The low 32 bits of a count: orders compare by wrapping distance, right
  /// for effects fewer than 2^31 registrations apart.
  package struct StartOrder: Comparable, Hashable, Sendable {
    package let rawValue: UInt32

    package init(_ rawValue: UInt32) {
      self.rawValue = rawValue
    }

    package static func < (lhs: Self, rhs: Self) -> Bool {
      Int32(bitPattern: lhs.rawValue &- rhs.rawValue) < 0
    }
  }

  /// The effect the calling task runs in (the innermost one, for an effect
  /// started inside another), if any: inherited by the tasks an effect
  /// starts, a `Task {}` included.
  package static var current: (any ObservedEffect)? {
    EffectScope.current
  }

  /// A start order taken now, from the count effects take theirs from: for
  /// a task outside any effect, which counts as started when it asks.
  package static func nextStartOrder() -> StartOrder {
    StartOrder(UInt32(truncatingIfNeeded: EffectRegistry.nextGeneration()))
  }
}

/// An effect of a core, as ``EffectObservation/current`` gives it: one
/// object per effect, for as long as anything holds it.
package protocol ObservedEffect: AnyObject, Sendable {
  /// When its core registered it, among the effects of every core.
  var startOrder: EffectObservation.StartOrder { get }

  /// Has `observer` called, from the effect's task, once the effect has
  /// finished; `false`, and no call, if it has no more work to do.
  func observeEnd(_ observer: @escaping @Sendable () -> Void) -> Bool
}

extension EffectJob: ObservedEffect {
  package var startOrder: EffectObservation.StartOrder {
    EffectObservation.StartOrder(EffectRegistryStateMachine.generation(of: token))
  }

  package func observeEnd(_ observer: @escaping @Sendable () -> Void) -> Bool {
    registry.observeEnd(token, observer)
  }
}
