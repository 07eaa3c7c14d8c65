// Rewriting the dependencies a child's effects read, for `dependencies:`.
extension Effect {
  /// The same effect, its `.run`s reading dependencies changed by
  /// `dependencies`, and each key it removes noted as removed by the child
  /// at `placement` (so that reading it names where it was removed).
  func changingDependencies(
    _ dependencies: @escaping @Sendable (inout Dependencies) -> Void, placedBy placement: ChildPlacement
  ) -> Effect {
    changingDependencies { values in
      let before = values
      dependencies(&values)
      values.noteRemovals(since: before, by: placement)
    }
  }

  /// The same effect, its `.run`s reading dependencies changed by `change`.
  func changingDependencies(_ change: @escaping @Sendable (inout Dependencies) -> Void) -> Effect {
    switch operation {
    case .none, .send, .cancel, .report:
      return self
    case .run(let run):
      let handler = run.handler.map { handler in
        { @Sendable (error: any Error, send: Send<Action>) in await handler(error, send.changingDependencies(change)) }
      }
      return .run(
        priority: run.priority.map(TaskPriority.init(rawValue:)),
        operation: { send in try await run.operation(send.changingDependencies(change)) },
        catch: handler,
        fileID: run.fileID,
        line: run.line
      )
    case .merge(let parts):
      return Effect(.merge(parts.map { $0.changingDependencies(change) }))
    case .concatenate(let parts):
      return Effect(.concatenate(parts.map { $0.changingDependencies(change) }))
    case .cancellable(let id, let cancelInFlight, let inner):
      return Effect(.cancellable(id, cancelInFlight: cancelInFlight, inner.changingDependencies(change)))
    }
  }
}

extension Send {
  /// The same `Send`, with dependencies changed by `change`: what a parent
  /// gives a child's effects when it overrides or narrows them.
  func changingDependencies(_ change: @Sendable (inout Dependencies) -> Void) -> Send {
    var dependencies = dependencies
    change(&dependencies)
    return Send(dependencies: dependencies, clock: clock, deliver: deliver)
  }
}
