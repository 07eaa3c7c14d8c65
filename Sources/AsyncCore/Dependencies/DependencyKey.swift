/// A key for one worker in ``Dependencies``: its type names the slot, its
/// `Value` is what effects get.
///
/// ```swift
/// protocol API: Sendable { func verify(_ code: String) async throws -> Bool }
///
/// enum APIKey: DependencyKey {
///   typealias Value = any API
/// }
///
/// extension Dependencies {
///   var api: any API {
///     get { self[APIKey.self] }
///     set { self[APIKey.self] = newValue }
///   }
/// }
/// ```
///
/// A key may declare a ``defaultValue``, used while nobody has set the key.
/// Declare one only where a single value is right everywhere, tests
/// included (a UUID generator, a formatter). A worker that reaches the
/// world (network, storage) should have none: reading it unset then stops
/// the program with a message naming the key, at the first effect that
/// needs it. A live default would let a test talk to the real server
/// without anyone noticing; a do-nothing default would hide where the
/// wiring was forgotten.
public protocol DependencyKey {
  /// The type of the value effects read.
  ///
  /// ```swift
  /// enum StorageKey: DependencyKey { typealias Value = any Storage }
  /// ```
  associatedtype Value: Sendable

  /// The value read while nobody has set the key. Without one of your own,
  /// reading the key unset is a programmer error.
  ///
  /// ```swift
  /// enum UUIDKey: DependencyKey {
  ///   static var defaultValue: @Sendable () -> UUID { { UUID() } }
  /// }
  /// ```
  ///
  /// - Important: Declare it with the type `Value` exactly (with
  ///   `typealias Value = any API`, write `static var defaultValue: any API`):
  ///   a property of another type is not this requirement, and the key then
  ///   has no default. It is read each time the key is read unset: return a
  ///   value, not a new shared object each time.
  static var defaultValue: Value { get }
}

extension DependencyKey {
  /// No default: reading the key unset stops the program with a message
  /// naming the key, at the line that read it.
  ///
  /// ```swift
  /// enum APIKey: DependencyKey { typealias Value = any API }
  /// // Dependencies()[APIKey.self]  // stops here: "no value for the dependency APIKey …"
  /// ```
  public static var defaultValue: Value {
    let name = "the dependency \(Self.self) (of type \(Value.self))"
    guard let read = DependencyRead.current else {
      // Read as `Key.defaultValue`, not through `Dependencies`.
      programmerError("\(name) declares no defaultValue of that type")
    }
    let place = "read at \(read.fileID):\(read.line)"
    if let removal = read.removal {
      programmerError(
        """
        no value for \(name), \(place): the dependencies: of \(removal.description) removed it, and the key \
        declares no defaultValue of that type; keep the key for that child there, or declare a defaultValue
        """,
        file: read.fileID, line: read.line
      )
    }
    programmerError(
      """
      no value for \(name) was set, and it declares no defaultValue of that type (\(place)); pass it when \
      creating the core (Core(initialState:dependencies:…)), in core.updateDependencies { … }, or in \
      Send(dependencies:…)
      """,
      file: read.fileID, line: read.line
    )
  }
}
