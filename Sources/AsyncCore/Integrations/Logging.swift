#if Logging
  import Logging

  extension EffectFailure {
    /// A diagnostics handler that writes each failure to `logger`, one line:
    /// the failure's description as the message, its fields as metadata,
    /// at a level per kind.
    ///
    /// ```swift
    /// let logger = Logger(label: "orders")
    /// let core = Core(initialState: Orders(), diagnostics: EffectFailure.log(to: logger), reducer: reduceOrders)
    /// ```
    ///
    /// Available with the `Logging` trait. The levels:
    /// - `.error`: an effect threw, or storage failed, so an action was
    ///   not reduced or a state not kept (``CoreDiagnostic/journalFailed(_:)``,
    ///   ``CoreDiagnostic/notJournaled(action:error:)``,
    ///   ``CoreDiagnostic/syncFailed(_:)``,
    ///   ``CoreDiagnostic/activationFailed(entity:error:)``,
    ///   ``CoreDiagnostic/notActivated(entity:action:error:)``);
    /// - `.warning`: the core goes on with nothing lost
    ///   (``CoreDiagnostic/snapshotFailed(_:)``,
    ///   ``CoreDiagnostic/passivationFailed(entity:error:)``,
    ///   ``CoreDiagnostic/duplicateID(id:collection:)``,
    ///   ``CoreDiagnostic/sendRefused(action:startedBy:reason:)`` after an
    ///   effect ended or was cancelled);
    /// - `.notice`: expected while stopping or racing a removal
    ///   (``CoreDiagnostic/effectRefused``, a refusal because the core
    ///   stopped, ``CoreDiagnostic/childNotFound(child:action:)``).
    ///
    /// Metadata: `asynccore.kind` (the case's name, or `effect` for an
    /// error an effect threw), `asynccore.file` and `asynccore.line` (the
    /// place), `asynccore.error` (the underlying error, when there is one),
    /// and, where the case has them, `asynccore.entity`, `asynccore.action`,
    /// `asynccore.child`, `asynccore.id`, `asynccore.collection`,
    /// `asynccore.startedBy` and `asynccore.reason`. Each value keeps its
    /// first 200 bytes of text and then says how many it left out
    /// (`… (1234 more bytes)`), as the description's actions do.
    public static func log(to logger: Logger) -> @Sendable (EffectFailure) -> Void {
      { failure in
        let entry = LogEntry(failure)
        logger.log(
          level: entry.level, "\(failure.description)", metadata: entry.metadata, file: "\(failure.fileID)",
          function: "", line: failure.line)
      }
    }
  }

  /// What ``EffectFailure/log(to:)`` writes for one failure.
  struct LogEntry {
    var level: Logger.Level
    var metadata: Logger.Metadata

    init(_ failure: EffectFailure) {
      metadata = [
        "asynccore.file": "\(failure.fileID)",
        "asynccore.line": "\(failure.line)",
      ]
      guard let diagnostic = failure.error as? CoreDiagnostic else {
        level = .error
        metadata["asynccore.kind"] = "effect"
        metadata["asynccore.error"] = Self.value(failure.error)
        return
      }
      switch diagnostic {
      case .childNotFound(let child, let action):
        (level, metadata["asynccore.kind"]) = (.notice, "childNotFound")
        metadata["asynccore.child"] = Self.value(child)
        metadata["asynccore.action"] = Self.value(action)
      case .duplicateID(let id, let collection):
        (level, metadata["asynccore.kind"]) = (.warning, "duplicateID")
        metadata["asynccore.id"] = Self.value(id)
        metadata["asynccore.collection"] = Self.value(collection)
      case .sendRefused(let action, let startedBy, let reason):
        level = reason == .coreStopped ? .notice : .warning
        metadata["asynccore.kind"] = "sendRefused"
        metadata["asynccore.action"] = Self.value(action)
        metadata["asynccore.startedBy"] = Self.value(startedBy)
        metadata["asynccore.reason"] = "\(reason)"
      case .effectRefused:
        (level, metadata["asynccore.kind"]) = (.notice, "effectRefused")
      case .notJournaled(let action, let error):
        (level, metadata["asynccore.kind"]) = (.error, "notJournaled")
        metadata["asynccore.action"] = Self.value(action)
        metadata["asynccore.error"] = Self.value(error)
      case .journalFailed(let error):
        (level, metadata["asynccore.kind"]) = (.error, "journalFailed")
        metadata["asynccore.error"] = Self.value(error)
      case .snapshotFailed(let error):
        (level, metadata["asynccore.kind"]) = (.warning, "snapshotFailed")
        metadata["asynccore.error"] = Self.value(error)
      case .syncFailed(let error):
        (level, metadata["asynccore.kind"]) = (.error, "syncFailed")
        metadata["asynccore.error"] = Self.value(error)
      case .activationFailed(let entity, let error):
        (level, metadata["asynccore.kind"]) = (.error, "activationFailed")
        metadata["asynccore.entity"] = Self.value(entity)
        metadata["asynccore.error"] = Self.value(error)
      case .notActivated(let entity, let action, let error):
        (level, metadata["asynccore.kind"]) = (.error, "notActivated")
        metadata["asynccore.entity"] = Self.value(entity)
        metadata["asynccore.action"] = Self.value(action)
        metadata["asynccore.error"] = Self.value(error)
      case .passivationFailed(let entity, let error):
        (level, metadata["asynccore.kind"]) = (.warning, "passivationFailed")
        metadata["asynccore.entity"] = Self.value(entity)
        metadata["asynccore.error"] = Self.value(error)
      }
    }

    /// `value`'s text, one line, its first 200 bytes and a count of the rest.
    static func value(_ value: any Sendable) -> Logger.MetadataValue {
      .string(CoreDiagnostic.render(value))
    }
  }
#endif
