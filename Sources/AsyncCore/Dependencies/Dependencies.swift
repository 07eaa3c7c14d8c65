/// The workers a core's effects use (network, storage, ids, dates), given
/// to the core when it is created and read by effects through
/// ``Send/dependencies``.
///
/// ```swift
/// let core = Core<Login, LoginAction>(
///   initialState: Login(),
///   dependencies: Dependencies { $0.api = LiveAPI() }
/// ) { state, action in
///   switch action {
///   case .verify(let code):
///     state.isLoading = true
///     return .run { send in
///       let ok = try await send.dependencies.api.verify(code)
///       await send(.verified(ok))
///     }
///   case .verified(let ok):
///     state.isLoading = false
///     state.isSignedIn = ok
///     return .none
///   }
/// }
/// ```
///
/// Each worker has a ``DependencyKey``; a computed property on
/// `Dependencies` (as in the key's example) gives it a name. A test makes its
/// core with fakes, and can replace one midway with
/// ``Core/updateDependencies(_:)``.
///
/// It is a value: copying it and changing the copy leaves the original as
/// it was, so a core, an effect and a test each hold their own. There is no
/// process-wide registry and no task-local lookup: an effect sees exactly
/// what its core was given.
///
/// - Important: Reading a key that was never set returns the key's
///   ``DependencyKey/defaultValue``; a key that declares none stops the
///   program with a message naming it and the line that read it (see
///   ``DependencyKey``).
public struct Dependencies: Sendable {
  /// The values set, by key type. Each entry's value has its key's `Value`
  /// type: only the typed subscript writes here.
  private var values: [ObjectIdentifier: any Sendable] = [:]
  /// The keys a child's `dependencies:` removed, with where that child was
  /// placed, for the message of a read. Setting the key again forgets it.
  private var removals: [ObjectIdentifier: ChildPlacement] = [:]

  /// No dependency set: every key reads its default.
  ///
  /// ```swift
  /// let core = Core<Counter, CounterAction>(initialState: Counter(), dependencies: Dependencies(), reducer: reduce)
  /// ```
  public init() {}

  /// Dependencies set by `configure`.
  ///
  /// ```swift
  /// let dependencies = Dependencies {
  ///   $0.api = FakeAPI(verifies: true)
  ///   $0.now = { Date(timeIntervalSince1970: 0) }
  /// }
  /// ```
  public init(_ configure: (inout Dependencies) -> Void) {
    configure(&self)
  }

  /// The value for `key`: the one set last, or the key's default.
  ///
  /// ```swift
  /// extension Dependencies {
  ///   var api: any API {
  ///     get { self[APIKey.self] }
  ///     set { self[APIKey.self] = newValue }
  ///   }
  /// }
  /// ```
  ///
  /// Reading a key that is not set and declares no default stops the
  /// program there: the message names the key and `fileID` and `line`,
  /// and the program stops at that place. Read through a property as
  /// above, that is the property's getter; read as
  /// `send.dependencies[APIKey.self]`, the effect's own line.
  ///
  /// - Parameters:
  ///   - key: The key's type.
  ///   - fileID: Where the key is read, for the message of a key that is
  ///     not set and has no default; leave the default.
  ///   - line: The line where the key is read; leave the default.
  public subscript<Key: DependencyKey>(
    _ key: Key.Type, fileID fileID: StaticString = #fileID, line line: UInt = #line
  ) -> Key.Value {
    get {
      guard let stored = values[ObjectIdentifier(key)] else {
        // The read's place reaches `defaultValue` through the thread (see
        // `DependencyRead`), for a key with no default to name it.
        let read = DependencyRead(fileID: fileID, line: line, removal: removals[ObjectIdentifier(key)])
        return read.during { Key.defaultValue }
      }
      guard let value = stored as? Key.Value else {
        programmerError("internal: the dependency \(Key.self) holds a \(type(of: stored)), not a \(Key.Value.self)")
      }
      return value
    }
    set {
      values[ObjectIdentifier(key)] = newValue
      removals[ObjectIdentifier(key)] = nil
    }
  }

  /// Whether a value was set for `key` (its default does not count).
  ///
  /// ```swift
  /// #expect(core.dependencies.contains(APIKey.self))
  /// ```
  public func contains<Key: DependencyKey>(_ key: Key.Type) -> Bool {
    values[ObjectIdentifier(key)] != nil
  }

  /// Forgets the value set for `key`: it reads its default again.
  ///
  /// ```swift
  /// dependencies.remove(APIKey.self)
  /// ```
  public mutating func remove<Key: DependencyKey>(_ key: Key.Type) {
    values[ObjectIdentifier(key)] = nil
  }

  /// Notes the keys set in `before` that are not set any more as removed
  /// by the child's `dependencies:` at `placement`.
  mutating func noteRemovals(since before: Dependencies, by placement: ChildPlacement) {
    for key in before.values.keys where values[key] == nil {
      removals[key] = placement
    }
  }
}

/// Where a child whose `dependencies:` changes what its effects see was
/// placed: its key path in the parent's state and, for `ifLet` and
/// `forEach`, the place in the code.
struct ChildPlacement: Sendable {
  /// The child's place in its parent's state.
  let step: ScopeStep
  /// The `ifLet` or `forEach` that placed it (`nil` for `scope`, which
  /// takes no place).
  let fileID: StaticString?
  let line: UInt

  /// `the child at \Board.detail (placed at App/Board.swift:12)`.
  var description: String {
    let child = ScopePath(steps: [step]).text
    guard let fileID else { return "the child at \(child)" }
    return "the child at \(child) (placed at \(fileID):\(line))"
  }
}
