/// Where a child sits in its core's state, from the root. A child's cancel
/// ids live under its path, so siblings never cancel each other; a child
/// that can leave the state has a lifetime id there marking its effects.
///
/// Reducers build paths from the child up, handles from the root down; both
/// merge a fixed step into the next (`\.child` then `\.rows` is
/// `\.child.rows`), so the two spell one child the same way.
@usableFromInline
struct ScopePath: Hashable, Sendable {
  var steps: [ScopeStep]

  @usableFromInline
  init(steps: [ScopeStep]) {
    self.steps = steps
  }

  /// `step` in front of this path, as a parent lifting a child's effects.
  func prepending(_ step: ScopeStep) -> ScopePath {
    guard let first = steps.first, !step.isDynamic else { return ScopePath(steps: [step] + steps) }
    var steps = steps
    steps[0] = step.followed(by: first)
    return ScopePath(steps: steps)
  }

  /// `step` after this path, as a handle scoping further down.
  func appending(_ step: ScopeStep) -> ScopePath {
    guard let last = steps.last, !last.isDynamic else { return ScopePath(steps: steps + [step]) }
    var steps = steps
    steps[steps.count - 1] = last.followed(by: step)
    return ScopePath(steps: steps)
  }

  /// The lifetime ids of this child and of every child it is inside that
  /// can leave the state: cancelling any one of them ends it.
  var lifetimeIDs: [CancelID] {
    steps.indices.filter { steps[$0].isDynamic }.map { index in
      ScopePath(steps: Array(steps[...index])).lifetimeID
    }
  }

  /// The id that marks every effect of the child at this path.
  var lifetimeID: CancelID { CancelID(ScopedID(path: self, id: CancelID(Lifetime()))) }
}

/// One step down the state: a key path, and for a collection's element its
/// id. A dynamic step (an optional child or an element) can stop existing.
@usableFromInline
struct ScopeStep: Hashable, @unchecked Sendable {
  // Safety: key paths are immutable values (`AnyKeyPath` is only not
  // declared `Sendable`); `CancelID` is Sendable. Nothing here mutates.
  let keyPath: AnyKeyPath
  let id: CancelID?
  let isDynamic: Bool

  /// A fixed child, always there.
  @usableFromInline
  static func fixed(_ keyPath: AnyKeyPath) -> ScopeStep {
    ScopeStep(keyPath: keyPath, id: nil, isDynamic: false)
  }

  /// An optional child.
  @usableFromInline
  static func optional(_ keyPath: AnyKeyPath) -> ScopeStep {
    ScopeStep(keyPath: keyPath, id: nil, isDynamic: true)
  }

  /// The element with `id` of a collection.
  @usableFromInline
  static func element(_ keyPath: AnyKeyPath, id: some Hashable & Sendable) -> ScopeStep {
    ScopeStep(keyPath: keyPath, id: CancelID(id), isDynamic: true)
  }

  /// This fixed step and `next` as one step.
  func followed(by next: ScopeStep) -> ScopeStep {
    guard let keyPath = keyPath.appending(path: next.keyPath) else {
      programmerError("internal: the key paths \(keyPath) and \(next.keyPath) do not join")
    }
    return ScopeStep(keyPath: keyPath, id: next.id, isDynamic: next.isDynamic)
  }
}

/// A child's cancel id, under the child's path.
struct ScopedID: Hashable, Sendable {
  let path: ScopePath
  let id: CancelID
}

/// The id every effect of a child that can leave the state is marked with,
/// under its path.
struct Lifetime: Hashable, Sendable {}

extension CancelID {
  /// Whether this is a child's lifetime id.
  var isLifetime: Bool {
    (value.base as? ScopedID)?.id.value.base is Lifetime
  }

  /// This id as seen one level up, from a parent that placed the child at
  /// `step`.
  func lifted(through step: ScopeStep) -> CancelID {
    if let scoped = value.base as? ScopedID {
      return CancelID(ScopedID(path: scoped.path.prepending(step), id: scoped.id))
    }
    return CancelID(ScopedID(path: ScopePath(steps: [step]), id: self))
  }
}

extension Effect {
  /// A child's effect as its parent returns it: actions embedded, cancel
  /// ids under `step`, dependencies changed, and, for a child that can
  /// leave the state, marked with its lifetime id.
  @usableFromInline
  func lifted<Parent: Sendable>(
    through step: ScopeStep,
    embed: @escaping @Sendable (Action) -> Parent,
    dependencies: (@Sendable (inout Dependencies) -> Void)?,
    fileID: StaticString? = nil,
    line: UInt = 0
  ) -> Effect<Parent> {
    guard !isNone else { return .none }
    var effect = self
    if let dependencies {
      effect = effect.changingDependencies(
        dependencies, placedBy: ChildPlacement(step: step, fileID: fileID, line: line))
    }
    var lifted = effect.map(embed).scopingIDs(through: step) { ($0 as? Action).map(embed) }
    if step.isDynamic {
      lifted = Effect<Parent>(
        .cancellable(ScopePath(steps: [step]).lifetimeID, cancelInFlight: false, lifted))
    }
    return lifted
  }

  /// The same effect with every cancel id lifted through `step`, and
  /// every report of a missing child or a duplicate id seen from the
  /// parent: `step` in front of its path, its action passed to
  /// `embedAction` (which gives `nil` for an action of another type).
  func scopingIDs(
    through step: ScopeStep, embedAction: (any Sendable) -> (any Sendable)?
  ) -> Effect {
    switch operation {
    case .none, .send, .run:
      return self
    case .report(let report):
      return Effect(.report(report.lifted(through: step, embedAction: embedAction)))
    case .merge(let parts):
      return Effect(.merge(parts.map { $0.scopingIDs(through: step, embedAction: embedAction) }))
    case .concatenate(let parts):
      return Effect(.concatenate(parts.map { $0.scopingIDs(through: step, embedAction: embedAction) }))
    case .cancel(let id):
      return Effect(.cancel(id.lifted(through: step)))
    case .cancellable(let id, let cancelInFlight, let inner):
      return Effect(
        .cancellable(
          id.lifted(through: step), cancelInFlight: cancelInFlight,
          inner.scopingIDs(through: step, embedAction: embedAction)))
    }
  }

  /// Cancels the effects of the child at `step` that has left the state.
  @usableFromInline
  static func endingChild(at step: ScopeStep) -> Effect {
    Effect(.cancel(ScopePath(steps: [step]).lifetimeID))
  }
}

extension ScopePath {
  /// The child's place from the root, for a message:
  /// `\App.sections[id: a].rows[id: 1]`, `\App.sheet?.rows[id: 2]`.
  /// Ids are escaped and cut after ``ScopePath/idLengthLimit`` bytes.
  var text: String {
    var text = ""
    for (index, step) in steps.enumerated() {
      text += index == 0 ? "\(step.keyPath)" : Self.relative(step.keyPath)
      if let id = step.id {
        text += "[id: \(Self.bounded(id.value.base))]"
      } else if step.isDynamic, index < steps.count - 1 {
        text += "?"  // an optional child, the next steps inside it
      }
    }
    return text
  }

  /// The most characters of an id a message shows.
  static let idLengthLimit = 40

  /// `id` as text, escaped and cut after `idLengthLimit` bytes, as log lines
  /// quote outside text.
  static func bounded(_ id: Any) -> String {
    logSafe(String(describing: id), quoted: false, limit: idLengthLimit)
  }

  /// `keyPath` as a continuation of the path before it: `\Section.rows`
  /// as `.rows`.
  static func relative(_ keyPath: AnyKeyPath) -> String {
    let text = "\(keyPath)"
    let root = "\\" + String(describing: type(of: keyPath).rootType)
    guard text.hasPrefix(root) else { return text }
    return String(text.dropFirst(root.count))
  }
}
