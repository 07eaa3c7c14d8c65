/// A composed reducer's report of a missing child or a duplicate id, on its
/// way up through the parents (each puts its step in front of ``path``)
/// until the core hands it on as a ``CoreDiagnostic`` (``failure``).
@usableFromInline
struct ScopeReport: Sendable {
  enum Kind: Sendable {
    /// An action for a child that is not in the state: the action as the
    /// reducers lifted so far see it.
    case childNotFound(action: any Sendable)
    /// More than one element of the collection has `id` (already as text).
    case duplicateID(id: String)
  }

  let kind: Kind
  /// The child's (or collection's) place, from the reducer that found it
  /// up to the one the report has been lifted through so far.
  let path: ScopePath
  /// Where the child (or the `forEach`) was placed.
  let fileID: StaticString
  let line: UInt

  /// This report as the parent that placed the reducer at `step` sees it:
  /// `step` in front of the path, and a missing child's action passed to
  /// `embedAction` (which gives `nil` for an action of another type).
  func lifted(through step: ScopeStep, embedAction: (any Sendable) -> (any Sendable)?) -> ScopeReport {
    let kind =
      switch kind {
      case .childNotFound(let action): Kind.childNotFound(action: embedAction(action) ?? action)
      case .duplicateID: kind
      }
    return ScopeReport(kind: kind, path: path.prepending(step), fileID: fileID, line: line)
  }

  /// What the diagnostics handler receives: the path rendered once, here.
  @usableFromInline
  var failure: EffectFailure {
    let diagnostic =
      switch kind {
      case .childNotFound(let action): CoreDiagnostic.childNotFound(child: path.text, action: action)
      case .duplicateID(let id): CoreDiagnostic.duplicateID(id: id, collection: path.text)
      }
    return EffectFailure(error: diagnostic, fileID: fileID, line: line)
  }
}

extension Effect {
  /// Reports `action`, addressed to the missing child at `step`, with the
  /// place the child was placed.
  @usableFromInline
  static func reportMissingChild(_ action: Action, at step: ScopeStep, fileID: StaticString, line: UInt) -> Effect {
    Effect(
      .report(
        ScopeReport(kind: .childNotFound(action: action), path: ScopePath(steps: [step]), fileID: fileID, line: line)))
  }

  /// Reports that more than one element of the collection at `keyPath`
  /// has `id`, with the place of the `forEach`.
  @usableFromInline
  static func reportDuplicate(
    _ id: some Hashable & Sendable, in keyPath: AnyKeyPath, fileID: StaticString, line: UInt
  ) -> Effect {
    let kind = ScopeReport.Kind.duplicateID(id: ScopePath.bounded(id))
    return Effect(
      .report(ScopeReport(kind: kind, path: ScopePath(steps: [.fixed(keyPath)]), fileID: fileID, line: line)))
  }
}
