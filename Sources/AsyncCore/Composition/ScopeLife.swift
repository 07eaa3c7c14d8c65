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

/// What a core keeps for handles to children that can leave the state (see
/// `Core.scopeBook`).
@usableFromInline
final class ScopeBook<State> {
  // Safety (for the `@exclusivity(unchecked)` below): a book belongs to one
  // core and is touched only by that core's own synchronous code, as the
  // core's `@exclusivity(unchecked)` properties are (see Core.swift).

  /// The lives of handles, by the lifetime ids whose cancellation ends
  /// them.
  var handles: [CancelID: [WeakScopeLife]] = [:]
  /// When `handles` next drops the entries of released handles.
  var compactionCount = 64
  /// The groups of observers and subscribers through handles, by the
  /// lifetime ids whose cancellation ends them.
  var groups: [CancelID: [Group]] = [:]
  /// The state before the action being reduced, kept while the core has
  /// ending subscriptions.
  @usableFromInline @exclusivity(unchecked) var stateBeforeAction: State?

  init() {}

  /// Forgets the groups whose members all ended before their child did.
  @usableFromInline
  func forgetEndedGroups() {
    guard !groups.isEmpty else { return }
    groups = groups.compactMapValues { groups in
      let kept = groups.filter { $0.registrations.removeEnded() > 0 }
      return kept.isEmpty ? nil : kept
    }
  }

  /// A group of registrations through handles on one child, and its key in
  /// the core's `groupsByKey`, if it has one.
  struct Group {
    let key: SelectionKey?
    let registrations: any Registrations
  }
}
