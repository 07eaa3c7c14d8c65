/// What the core itself reports to its diagnostics handler, as the
/// ``EffectFailure/error`` of an ``EffectFailure`` whose ``EffectFailure/fileID``
/// and ``EffectFailure/line`` give the place the report is about: an action
/// for a child that is not in the state, two elements of a `forEach`'s
/// collection with one id, an action an effect sent after it could no longer
/// send, or an effect not started because the core is shutting down.
///
/// None of them stops the core: each is a value the core did not reduce or an
/// effect it did not run, told to the handler instead of dropped silently. Any
/// other error in an ``EffectFailure`` is one an effect threw.
///
/// ```swift
/// let core = Core(initialState: Todos(), diagnostics: { failure in
///   switch failure.error as? CoreDiagnostic {
///   case .childNotFound?: logger.notice("\(failure)")   // a tap on a row just deleted
///   case .effectRefused?: break                          // shutting down: expected
///   default: logger.error("\(failure)")
///   }
/// }, reducer: todos)
/// ```
public enum CoreDiagnostic: Error, Sendable, CustomStringConvertible {
  /// An action addressed to a child that is not in the state (an optional
  /// child that is `nil`, or an element with no such id, gone or never
  /// there): the child did not reduce it, and the core goes on. The
  /// failure's place is where the child was placed (the `ifLet` or `forEach`).
  ///
  /// It happens when an action is sent before the child is removed and
  /// reduced after (a tap racing a delete). Both values are seen from the
  /// core's state:
  /// - `child`: where the child was, from the root: its key path, with each
  ///   element's id (escaped, cut after 40 bytes) and a `?` after each
  ///   optional child it is inside;
  /// - `action`: the action the core reduced, which carried the child's
  ///   action down.
  ///
  /// ```swift
  /// if case .childNotFound(let child, let action)? = failure.error as? CoreDiagnostic {
  ///   print(child)   // \Library.sections[id: a].rows[id: 3]
  ///   print(action)  // section(id: "a", action: .row(id: 3, action: .toggle))
  /// }
  /// ```
  case childNotFound(child: String, action: any Sendable)

  /// Two or more elements of a `forEach`'s collection have one id. The
  /// failure's place is where the `forEach` was placed.
  ///
  /// An element is its id (see
  /// ``Reduce/forEach(_:action:dependencies:fileID:line:element:)``): while
  /// two share one, actions for it reach the first, and removing either ends
  /// the child with that id (an element left with it is a new child). The
  /// state is not changed: the duplicate is a bug to fix where it is made.
  ///
  /// Reported once each time an id comes to be held twice, after the action
  /// that did it, when that was the reducer `forEach` was called on or an
  /// element; duplicates in the initial state, or made by a reducer beside
  /// `forEach`, are not seen.
  /// - `id`: the id, as text (escaped, and cut after 40 bytes);
  /// - `collection`: the collection, from the root of the core's state: its
  ///   key path, with the id of each element it is inside.
  ///
  /// ```swift
  /// if case .duplicateID(let id, let collection)? = failure.error as? CoreDiagnostic {
  ///   logger.fault("\(id) is twice in \(collection)")   // 3 is twice in \Todos.rows
  /// }
  /// ```
  case duplicateID(id: String, collection: String)

  /// An action an effect sent after it could no longer send: the core
  /// refused it and did not reduce it (`send` returned
  /// ``SendResult/effectEnded``, ``SendResult/effectCancelled`` or
  /// ``SendResult/shutDown``, as `reason` says). The failure's place is
  /// where the effect was made.
  ///
  /// An effect's ``Send`` is valid while the effect runs. Effects rarely
  /// read `send`'s result, so the core reports the first refused action of
  /// each `.run`, once: a `Send` kept past its effect is a bug to fix, and a
  /// cancelled effect that still sends shows where cancellation went unchecked.
  /// - `action`: the action the effect sent;
  /// - `startedBy`: the action whose reduction returned the effect;
  /// - `reason`: why it was refused.
  ///
  /// ```swift
  /// if case .sendRefused(_, _, .effectEnded)? = failure.error as? CoreDiagnostic {
  ///   logger.error("\(failure)")   // a Send outlived its effect
  /// }
  /// ```
  case sendRefused(action: any Sendable, startedBy: any Sendable, reason: RefusalReason)

  /// An effect a reducer returned once ``Core/shutdown(_:)`` with
  /// `.immediate` had begun: the core did not start it. The failure's place
  /// is where the effect was made. (An effect that ran and threw
  /// ``CoreError/shutDown`` itself is reported with that error, not this.)
  ///
  /// ```swift
  /// let core = Core(initialState: App(), diagnostics: { failure in
  ///   if case .effectRefused? = failure.error as? CoreDiagnostic { return }   // shutting down: expected
  ///   logger.error("\(failure)")
  /// }, reducer: reduceApp)
  /// ```
  case effectRefused

  /// A durable core's journal did not take an action nobody waited on (a
  /// `send`, an `enqueue`, an effect's follow-up): it could not be encoded,
  /// or the journal had failed. It was not reduced.
  ///
  /// ```swift
  /// if case .notJournaled(let action, let error)? = failure.error as? CoreDiagnostic {
  ///   logger.error("lost \(action): \(error)")
  /// }
  /// ```
  case notJournaled(action: any Sendable, error: any Error)

  /// A durable core's journal failed to append; the core has shut down.
  /// The slice's dispatchers got ``CoreError/journal(_:)``.
  ///
  /// ```swift
  /// if case .journalFailed(let error)? = failure.error as? CoreDiagnostic { alert(error) }
  /// ```
  case journalFailed(any Error)

  /// A durable core's journal failed to write a snapshot; the core goes on,
  /// and tries again when the journal next says one is due.
  ///
  /// ```swift
  /// if case .snapshotFailed(let error)? = failure.error as? CoreDiagnostic { logger.warning("\(error)") }
  /// ```
  case snapshotFailed(any Error)

  /// A durable core's interval sync failed; the records stay unsynced
  /// until a later sync succeeds.
  ///
  /// ```swift
  /// if case .syncFailed(let error)? = failure.error as? CoreDiagnostic { logger.error("\(error)") }
  /// ```
  case syncFailed(any Error)

  /// A registry of ``Entities`` could not activate `entity` (described
  /// with `String(describing:)`): its store could not read it. Callers
  /// waiting for it got ``CoreError/journal(_:)``; a later use tries again.
  ///
  /// ```swift
  /// if case .activationFailed(let entity, let error)? = failure.error as? CoreDiagnostic { alert(entity, error) }
  /// ```
  case activationFailed(entity: String, error: any Error)

  /// An action sent to `entity` was not reduced: the entity could not be
  /// activated (``activationFailed(entity:error:)``).
  ///
  /// ```swift
  /// if case .notActivated(let entity, let action, _)? = failure.error as? CoreDiagnostic { retry(action, entity) }
  /// ```
  case notActivated(entity: String, action: any Sendable, error: any Error)

  /// A registry of ``Entities`` could not snapshot `entity`'s state when
  /// passivating it: the entity stays active (at the registry's shutdown
  /// its core stops anyway), and nothing is lost: its records hold every
  /// action it reduced.
  ///
  /// ```swift
  /// if case .passivationFailed(let entity, let error)? = failure.error as? CoreDiagnostic { logger.warning("\(entity): \(error)") }
  /// ```
  case passivationFailed(entity: String, error: any Error)

  /// Why the core refused an action an effect sent (``sendRefused(action:startedBy:reason:)``).
  /// When more than one holds, the first wins: the effect had ended (a bug
  /// whatever ended it), the core had stopped, the effect had been cancelled.
  ///
  /// ```swift
  /// if case .sendRefused(_, _, let reason)? = failure.error as? CoreDiagnostic, reason != .coreStopped {
  ///   metrics.lateSends += 1
  /// }
  /// ```
  public enum RefusalReason: Sendable, Hashable {
    /// The effect's operation had returned (and its `catch:` handler, if
    /// any): its `Send` was used after the effect ended, from a task or
    /// closure it escaped into.
    ///
    /// ```swift
    /// return .run { send in
    ///   Task { await send(.late) }   // may run after the effect ended: refused, reported
    /// }
    /// ```
    case effectEnded
    /// The effect had been cancelled: by ``Effect/cancel(id:)``,
    /// `cancelInFlight`, ``EffectHandle/cancel()``, ``Core/cancelEffects(id:)``
    /// or the cancellation of its task.
    ///
    /// ```swift
    /// return .run { send in
    ///   let page = await slowUncancellableLoad()   // cancelled meanwhile
    ///   await send(.loaded(page))                  // refused, reported
    /// }
    /// .cancellable(id: LoadID(), cancelInFlight: true)
    /// ```
    case effectCancelled
    /// The core had shut down or been released.
    ///
    /// ```swift
    /// await core.shutdown(.immediate)   // effects that send from now on are refused
    /// ```
    case coreStopped
  }

  /// The diagnostic in one sentence, for a log: one line, each action's text
  /// escaped and cut after 200 bytes (an action's payload cannot flood a
  /// log). ``EffectFailure/description`` adds the place.
  ///
  /// ```swift
  /// print(diagnostic)
  /// // an action for \Todos.rows[id: 3], which is not in the state, was not reduced:
  /// // row(id: 3, action: App.RowAction.toggle)
  /// ```
  public var description: String {
    switch self {
    case .childNotFound(let child, let action):
      return "an action for \(child), which is not in the state, was not reduced: \(Self.render(action))"
    case .duplicateID(let id, let collection):
      return "more than one element of \(collection) has the id \(id): actions for it reach the first"
    case .sendRefused(let action, let startedBy, let reason):
      let when =
        switch reason {
        case .effectEnded: "after it ended (a Send is valid only while its effect runs)"
        case .effectCancelled: "after it was cancelled"
        case .coreStopped: "after the core shut down"
        }
      return "the effect of \(Self.render(startedBy)) sent \(Self.render(action)) \(when); it was not reduced"
    case .effectRefused:
      return "an effect was not started: the core is shutting down"
    case .notJournaled(let action, let error):
      return "the journal did not take \(Self.render(action)), so it was not reduced: \(Self.render(error))"
    case .journalFailed(let error):
      return "the journal failed to append, so the core shut down: \(Self.render(error))"
    case .snapshotFailed(let error):
      return "the journal failed to write a snapshot: \(Self.render(error))"
    case .syncFailed(let error):
      return "the journal failed to sync: \(Self.render(error))"
    case .activationFailed(let entity, let error):
      return "the entity \(Self.render(entity)) could not be activated: \(Self.render(error))"
    case .notActivated(let entity, let action, let error):
      return
        "\(Self.render(action)), sent to the entity \(Self.render(entity)), was not reduced: it could not be activated: \(Self.render(error))"
    case .passivationFailed(let entity, let error):
      return
        "the entity \(Self.render(entity)) could not be snapshotted (it stays active, unless the registry is shutting down; its records hold every action it reduced): \(Self.render(error))"
    }
  }

  /// `action` as one bounded line of log text.
  static func render(_ action: any Sendable) -> String {
    logSafe(String(describing: action), quoted: false)
  }
}
