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
///   program with a message naming it (see ``DependencyKey``).
public struct Dependencies: Sendable {
  /// The values set, by key type. Each entry's value has its key's `Value`
  /// type: only the typed subscript writes here.
  private var values: [ObjectIdentifier: any Sendable] = [:]

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
  public subscript<Key: DependencyKey>(_ key: Key.Type) -> Key.Value {
    get {
      guard let stored = values[ObjectIdentifier(key)] else { return Key.defaultValue }
      guard let value = stored as? Key.Value else {
        programmerError("internal: the dependency \(Key.self) holds a \(type(of: stored)), not a \(Key.Value.self)")
      }
      return value
    }
    set {
      values[ObjectIdentifier(key)] = newValue
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
}
