/// An action in the mailbox, with the lineage of the effect that sent it
/// (`nil` for actions from outside), so that a dispatch's effects can be
/// awaited through their follow-up actions.
@usableFromInline
struct Envelope<Action: Sendable>: Sendable {
  @usableFromInline let action: Action
  @usableFromInline let lineage: Lineage?

  @inlinable
  init(action: Action, lineage: Lineage?) {
    self.action = action
    self.lineage = lineage
  }
}
