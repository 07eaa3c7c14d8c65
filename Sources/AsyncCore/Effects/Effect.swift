/// Work a reducer asks the core to do after it returns: anything that waits
/// on the world (network, timers, disk, another service) and may send actions
/// back.
///
/// The reducer stays synchronous and pure; it describes effects, the core
/// runs them as child tasks it owns and feeds what they send back through
/// its mailbox, in order.
///
/// ```swift
/// let core = Core<Search, SearchAction>(initialState: Search()) { state, action in
///   switch action {
///   case .queryChanged(let query):
///     state.query = query
///     return .run { send in
///       try await send.clock.sleep(for: .milliseconds(300))  // debounce
///       await send(.resultsLoaded(try await api.search(query)))
///     }
///     .cancellable(id: "search", cancelInFlight: true)
///   case .resultsLoaded(let results):
///     state.results = results
///     return .none
///   }
/// }
/// ```
///
/// - Important: Effects belong to one core. Cancel ids are scoped to it, so
///   two cores (or two tests running in parallel) never cancel each other's
///   effects.
public struct Effect<Action: Sendable>: Sendable {
  @usableFromInline
  enum Operation: Sendable {
    case none
    case send(Action)
    case run(Run)
    case merge([Effect])
    case concatenate([Effect])
    case cancel(CancelID)
    indirect case cancellable(CancelID, cancelInFlight: Bool, Effect)
    /// Hands `report` to the core's diagnostics handler (a child gone, a
    /// duplicate id). Boxed, or every effect would copy the report's size.
    indirect case report(ScopeReport)
  }

  @usableFromInline
  struct Run: Sendable {
    @inlinable
    init(
      priority: UInt8?,
      operation: @escaping @Sendable (Send<Action>) async throws -> Void,
      handler: (@Sendable (any Error, Send<Action>) async -> Void)?,
      fileID: StaticString,
      line: UInt
    ) {
      self.priority = priority
      self.operation = operation
      self.handler = handler
      self.fileID = fileID
      self.line = line
    }

    /// The child task's priority, raw: `TaskPriority` is resilient, and
    /// would make every copy of an `Effect` go through value witnesses.
    @usableFromInline let priority: UInt8?
    @usableFromInline let operation: @Sendable (Send<Action>) async throws -> Void
    @usableFromInline let handler: (@Sendable (any Error, Send<Action>) async -> Void)?
    @usableFromInline let fileID: StaticString
    @usableFromInline let line: UInt
  }

  @usableFromInline let operation: Operation

  @inlinable
  init(_ operation: Operation) {
    self.operation = operation
  }

  /// `true` for ``none``: the reducer asked for nothing. Inlined so a core
  /// pays one comparison per action that starts no effect.
  @inlinable
  var isNone: Bool {
    if case .none = operation { return true }
    return false
  }

  /// No effect.
  ///
  /// ```swift
  /// case .increment:
  ///   state.count += 1
  ///   return .none
  /// ```
  @inlinable
  public static var none: Effect { Effect(.none) }

  /// Sends `action` back to the core, reduced right after the action that
  /// returned it.
  ///
  /// ```swift
  /// case .logOut:
  ///   state.user = nil
  ///   return .send(.showSignIn)
  /// ```
  ///
  /// - Important: `.send` is synchronous: the core reduces the action right
  ///   after the one that returned it, before any other, first in, first
  ///   out. Sends inside a `.merge`, a `.cancellable`, or a `.concatenate` of
  ///   sends and cancels only are reduced in the order listed; a
  ///   `.concatenate` with a `.run` sends after the work before. If `a`
  ///   returns `.merge([.send(b), .send(c)])` and `b` returns `.send(d)`, the
  ///   core reduces `a`, `b`, `c`, `d`, on every run; ``Core/dispatch(_:)``
  ///   returns after all of them. A reducer that keeps sending to itself
  ///   never returns.
  public static func send(_ action: Action) -> Effect {
    Effect(.send(action))
  }

  /// Runs `operation` as a child task of the core; it may send any number
  /// of actions back.
  ///
  /// ```swift
  /// return .run { send in
  ///   let user = try await api.user(id)
  ///   await send(.userLoaded(user))
  /// } catch: { error, send in
  ///   await send(.loadFailed("\(error)"))
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - priority: The child task's priority; by default the runner's.
  ///   - operation: The work. Read time through `send.clock`, so tests can
  ///     drive it.
  ///   - handler: Turns an error `operation` throws into actions. Without
  ///     one, the error goes to the core's diagnostics handler with the
  ///     place this effect was made. `CancellationError` is never reported.
  ///   - fileID: Where the effect was made, for the diagnostics handler's
  ///     ``EffectFailure``; leave the default.
  ///   - line: The line where the effect was made; leave the default.
  /// - Important: An effect cancelled before its task starts (by
  ///   ``cancel(id:)``, `cancelInFlight`, `shutdown(.immediate)` or the
  ///   core's release) never runs `operation`, nor `handler`: keep cleanup
  ///   that must always happen out of the effect's body.
  // Inlinable: a resilient `TaskPriority?` passed across the module is
  // copied through its metadata.
  @inlinable
  public static func run(
    priority: TaskPriority? = nil,
    operation: @escaping @Sendable (_ send: Send<Action>) async throws -> Void,
    catch handler: (@Sendable (_ error: any Error, _ send: Send<Action>) async -> Void)? = nil,
    fileID: StaticString = #fileID,
    line: UInt = #line
  ) -> Effect {
    Effect(.run(Run(priority: priority?.rawValue, operation: operation, handler: handler, fileID: fileID, line: line)))
  }

  /// Runs `effects` at the same time.
  ///
  /// ```swift
  /// case .refresh:
  ///   return .merge([.run { send in … }, .run { send in … }])
  /// case .refreshAll:
  ///   return .merge(state.feedIDs.map { id in
  ///     .run { send in await send(.feedLoaded(id, try await fetchFeed(id))) }
  ///   })
  /// ```
  @inlinable
  public static func merge(_ effects: [Effect]) -> Effect {
    combining(effects, into: Operation.merge)
  }

  /// This effect and `other` at the same time, without an array when either
  /// is ``none`` (as on almost every composed action).
  @inlinable
  func merging(_ other: Effect) -> Effect {
    if other.isNone { return self }
    if isNone { return other }
    // Flat, as one `.merge` of them all would be.
    if case .merge(let parts) = operation { return Effect(.merge(parts + [other])) }
    return Effect(.merge([self, other]))
  }

  /// Runs `effects` one after another, each once the one before has
  /// finished.
  ///
  /// ```swift
  /// case .save:
  ///   return .concatenate([.run { _ in try await save() }, .send(.saved)])
  /// case .uploadAll:
  ///   return .concatenate(state.pending.map { file in
  ///     .run { send in await send(.uploaded(try await upload(file))) }
  ///   })
  /// ```
  ///
  /// If the effect is cancelled, the parts that have not started never start.
  @inlinable
  public static func concatenate(_ effects: [Effect]) -> Effect {
    combining(effects, into: Operation.concatenate)
  }

  /// `effects` without the `.none`s, as one effect; allocates nothing when
  /// at most one is an effect (composed reducers merge mostly `.none`s).
  @inlinable
  static func combining(_ effects: [Effect], into combine: ([Effect]) -> Operation) -> Effect {
    var first: Int?
    var count = 0
    for index in effects.indices where !effects[index].isNone {
      if first == nil { first = index }
      count += 1
    }
    switch (count, first) {
    case (0, _): return .none
    case (1, let first?): return effects[first]
    default: return Effect(combine(effects.filter { !$0.isNone }))
    }
  }

  /// Cancels this core's effects marked ``cancellable(id:cancelInFlight:)``
  /// with `id`, running or not yet started.
  ///
  /// An effect nested in several `.cancellable`s is marked with each id as
  /// soon as the reducer returns it. A `.cancellable` part of a
  /// `.concatenate` that comes after a `.run` is marked when the
  /// concatenation reaches it.
  ///
  /// ```swift
  /// case .stopTimer:
  ///   return .cancel(id: TimerID())
  /// ```
  public static func cancel(id: some Hashable & Sendable) -> Effect {
    Effect(.cancel(CancelID(id)))
  }

  /// Marks this effect so that ``cancel(id:)`` with the same `id` cancels it.
  ///
  /// ```swift
  /// return .run { send in … }.cancellable(id: "search", cancelInFlight: true)
  /// ```
  ///
  /// - Parameters:
  ///   - id: Any `Hashable & Sendable` value; ids are equal only when their
  ///     types and values are.
  ///   - cancelInFlight: Cancel the effects already marked with `id` before
  ///     starting this one, so only the newest runs (search as you type).
  /// - Important: Cancellation is cooperative, and an effect may send an
  ///   action in the instant before it is cancelled. That action was accepted
  ///   and is reduced, possibly after the action that cancelled the effect.
  ///   Where that matters, tag what the effect sends with the request it
  ///   serves and ignore stale ones in the reducer.
  public func cancellable(id: some Hashable & Sendable, cancelInFlight: Bool = false) -> Effect {
    guard !isNone else { return self }
    return Effect(.cancellable(CancelID(id), cancelInFlight: cancelInFlight, self))
  }

  /// The same effect, sending `transform(action)` instead of each action:
  /// lifts a child feature's effects into its parent's action type.
  ///
  /// ```swift
  /// case .profile(let action):
  ///   return reduceProfile(&state.profile, action).map(AppAction.profile)
  /// ```
  public func map<Mapped: Sendable>(_ transform: @escaping @Sendable (Action) -> Mapped) -> Effect<Mapped> {
    switch operation {
    case .none:
      return .none
    case .send(let action):
      return .send(transform(action))
    case .run(let run):
      let handler = run.handler.map { handler in
        { @Sendable (error: any Error, send: Send<Mapped>) in await handler(error, send.map(transform)) }
      }
      return .run(
        priority: run.priority.map(TaskPriority.init(rawValue:)),
        operation: { send in try await run.operation(send.map(transform)) },
        catch: handler,
        fileID: run.fileID,
        line: run.line
      )
    case .merge(let effects):
      return Effect<Mapped>(.merge(effects.map { $0.map(transform) }))
    case .concatenate(let effects):
      return Effect<Mapped>(.concatenate(effects.map { $0.map(transform) }))
    case .cancel(let id):
      return Effect<Mapped>(.cancel(id))
    case .cancellable(let id, let cancelInFlight, let effect):
      return Effect<Mapped>(.cancellable(id, cancelInFlight: cancelInFlight, effect.map(transform)))
    case .report(let report):
      return Effect<Mapped>(.report(report))
    }
  }
}

/// A cancel id: any `Hashable & Sendable` value, compared by type and value.
///
/// Not `AnyHashable` alone: it compares numbers across types
/// (`AnyHashable(1 as UInt8) == AnyHashable(1)`).
@usableFromInline
struct CancelID: Hashable, @unchecked Sendable {
  // Safety: `AnyHashable` is not declared Sendable, but `value` is only ever
  // made from a value whose type is `Hashable & Sendable` (the one
  // initializer), and AnyHashable adds no mutable state of its own.
  let value: AnyHashable
  let type: ObjectIdentifier

  init<ID: Hashable & Sendable>(_ id: ID) {
    self.value = AnyHashable(id)
    self.type = ObjectIdentifier(ID.self)
  }
}

extension Effect {
  /// Whether the effect is made only of `.send`s and `.cancel`s (through
  /// `.merge`, `.concatenate` and `.cancellable`): the core carries it out
  /// while reducing the action that returned it, with no task.
  @inlinable
  var isSynchronous: Bool {
    switch operation {
    case .none, .send, .cancel, .report:
      return true
    case .merge(let parts), .concatenate(let parts):
      return parts.allSatisfy { $0.isSynchronous }
    case .cancellable(_, _, let inner):
      return inner.isSynchronous
    case .run:
      return false
    }
  }

  /// Where the effect was made: its first `.run`'s file and line.
  var location: (fileID: StaticString, line: UInt)? {
    switch operation {
    case .none, .send, .cancel, .report:
      return nil
    case .run(let run):
      return (run.fileID, run.line)
    case .merge(let parts), .concatenate(let parts):
      return parts.lazy.compactMap(\.location).first
    case .cancellable(_, _, let inner):
      return inner.location
    }
  }
}
