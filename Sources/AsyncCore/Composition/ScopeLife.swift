import Synchronization

/// Whether the child a scoped handle points at is still in the state, as
/// far as the core has seen: shared by the handle (which reads it on every
/// `send`) and its core (which ends it when the child leaves).
@usableFromInline
final class ScopeLife: Sendable {
  private let removed = Atomic<Bool>(false)

  init() {}

  var isRemoved: Bool { removed.load(ordering: .acquiring) }

  func end() { removed.store(true, ordering: .releasing) }
}

/// A core's hold on a handle's life: weak, so handles a user lets go are
/// not kept.
struct WeakScopeLife: Sendable {
  weak var life: ScopeLife?
}
