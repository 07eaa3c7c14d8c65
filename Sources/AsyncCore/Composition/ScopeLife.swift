import Synchronization

/// Whether the child a scoped handle points at is still in the state, as
/// far as the core has seen: shared by the handle (which reads it on every
/// `send`) and its core (which ends it when the child leaves).
@usableFromInline
final class ScopeLife: Sendable {
  @usableFromInline let removed = Atomic<Bool>(false)

  init() {}

  @usableFromInline
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
  /// The children that handles are on, checked after every action, so a
  /// child removed where no `ifLet` or `forEach` sees it ends its handles
  /// before another with its id takes its place. Parallel arrays, so the
  /// check walks only `watchChecks`.
  ///
  /// The lifetime id of each watched child: ending it ends the handles.
  @usableFromInline @exclusivity(unchecked) var watchedIDs: [CancelID] = []
  /// Whether each watched child is still in a state (for an `Identifiable`
  /// optional child, the same one).
  @usableFromInline @exclusivity(unchecked) var watchChecks: [@Sendable (State) -> Bool] = []
  /// The handles on each watched child, weakly: once all are released or
  /// ended and no observer through them is left, the watch goes.
  var watchLives: [[WeakScopeLife]] = []
  /// How many more checks before the watches nobody needs are dropped.
  @usableFromInline @exclusivity(unchecked) var checksUntilPrune = ScopeBook.checksBetweenPrunes

  init() {}

  /// The checks between two looks for watches nobody needs: a released
  /// handle's watch costs its check until then, not a weak load per action.
  @usableFromInline static var checksBetweenPrunes: Int { 256 }

  /// Adds `life` to the watch of the child `id`, or watches that child
  /// with `isPresent`.
  func watch(_ id: CancelID, for life: ScopeLife, isPresent: @escaping @Sendable (State) -> Bool) {
    if let index = watchedIDs.firstIndex(of: id) {
      watchLives[index].append(WeakScopeLife(life: life))
    } else {
      watchedIDs.append(id)
      watchChecks.append(isPresent)
      watchLives.append([WeakScopeLife(life: life)])
    }
  }

  /// Stops watching the child `id` (it has left).
  func unwatch(_ id: CancelID) {
    guard let index = watchedIDs.firstIndex(of: id) else { return }
    watchedIDs.remove(at: index)
    watchChecks.remove(at: index)
    watchLives.remove(at: index)
  }

  /// Drops the watches of children no live handle and no observer through
  /// one is on any more.
  @usableFromInline
  func pruneWatches() {
    checksUntilPrune = Self.checksBetweenPrunes
    for index in watchedIDs.indices.reversed() {
      let isNeeded =
        watchLives[index].contains { $0.life?.isRemoved == false } || groups[watchedIDs[index]] != nil
      if !isNeeded {
        watchedIDs.remove(at: index)
        watchChecks.remove(at: index)
        watchLives.remove(at: index)
      }
    }
  }

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
