/// What a clock driven by a test can learn about the effects of cores:
/// which effect the calling task runs in, the order effects were started
/// in, and when one has finished. `ManualClock` (in AsyncCoreTesting) wakes
/// its sleepers in start order and follows each woken effect until it ends
/// through this, and through nothing else of the core.
///
/// A core pays nothing for it while nobody observes: the start order is the
/// generation its registry puts in every effect's token anyway, and an end
/// observer pins the effect it waits for, so that only that effect's finish
/// takes the slow path (the one a cancelled effect takes) where the observer
/// is told. Neither the effect job nor the registry's entries keep a field
/// for it.
package enum EffectObservation {
  /// A place in the order effects were registered, by every core of the
  /// process: two effects started one after the other (by one core while
  /// reducing, or by two cores a test drives in turn) are in that order.
  ///
  /// It is the low 32 bits of a count, so it wraps: two orders compare by
  /// their wrapping distance, which is right for any two effects registered
  /// fewer than 2^31 registrations apart (those that can wait on a clock at
  /// once, in any run shorter than hours of nonstop effects).
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

  /// Has `observer` called once the effect has finished (its core counts
  /// it no longer), from the effect's task; `false`, and no call, if it has
  /// no more work to do: it has finished already, or its work is over and
  /// its task only waits for a canceller to let it end.
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
