/// A child's place in its parent's state, read and written on every action
/// a composed reducer sees: through a pointer when the key path is a chain
/// of stored properties of structs (see `FieldOffset`), else as a key path
/// (a computed property, a class, an optional chain).
@usableFromInline
struct StateLens<Root, Value>: @unchecked Sendable {
  // Safety: a key path is an immutable value (`WritableKeyPath` is only not
  // declared `Sendable`; the ones stored here were `& Sendable` when passed
  // in), and `field` is `Sendable`. Nothing here mutates.
  @usableFromInline let keyPath: WritableKeyPath<Root, Value>
  @usableFromInline let field: FieldOffset<Root, Value>?

  @inlinable
  init(_ keyPath: WritableKeyPath<Root, Value>) {
    self.keyPath = keyPath
    self.field = FieldOffset(keyPath)
  }

  /// The child in `root`.
  @inlinable
  func get(_ root: inout Root) -> Value {
    modify(&root) { $0 }
  }

  /// Runs `body` on the child in `root`, in place.
  @inlinable
  func modify<Result>(_ root: inout Root, _ body: (inout Value) -> Result) -> Result {
    guard let field else { return body(&root[keyPath: keyPath]) }
    return field.modify(&root, body)
  }
}

/// What tells one optional child from the next, for `ifLet`: its `id` when
/// its type is `Identifiable` (checked once, when the reducer is built);
/// otherwise every child is the same one while present.
@usableFromInline
struct ChildIdentity<Child>: Sendable {
  @usableFromInline let isIdentifiable: Bool

  @usableFromInline
  init() {
    isIdentifiable = Child.self is any Identifiable.Type
  }

  /// The `id` of `child`, or `nil` if it is absent or has none.
  @inlinable
  func id(of child: Child?) -> AnyHashable? {
    guard isIdentifiable, let child else { return nil }
    return Self.id(of: child)
  }

  @usableFromInline
  static func id(of child: Child) -> AnyHashable {
    guard let child = child as? any Identifiable else {
      programmerError("internal: \(Child.self) was Identifiable when the reducer was built")
    }
    return id(opening: child)
  }

  private static func id(opening child: some Identifiable) -> AnyHashable { AnyHashable(child.id) }
}

/// A read-only `StateLens`, with which handles find their child.
@usableFromInline
struct ReadLens<Root, Value>: @unchecked Sendable {
  // Safety: as `StateLens`: the key path was `& Sendable` when passed in
  // and is immutable, `field` is `Sendable`. Nothing here mutates.
  @usableFromInline let keyPath: KeyPath<Root, Value>
  @usableFromInline let field: FieldOffset<Root, Value>?

  @inlinable
  init(_ keyPath: KeyPath<Root, Value>) {
    self.keyPath = keyPath
    self.field = FieldOffset(keyPath)
  }

  /// Runs `body` on the child in `root`.
  @inlinable
  func read<Result>(_ root: Root, _ body: (Value) -> Result) -> Result {
    guard let field else { return body(root[keyPath: keyPath]) }
    return field.read(root, body)
  }
}

/// Finds the element with `id` of the collection at a key path, first
/// where it was last found: O(1) in a list that does not reorder.
@usableFromInline
struct ElementFinder<Root, Elements: Collection>: Sendable
where Elements.Element: Identifiable, Elements.Element.ID: Sendable {
  @usableFromInline let lens: ReadLens<Root, Elements>
  @usableFromInline let id: Elements.Element.ID
  @usableFromInline let hint: IndexHint<Elements.Index>

  @inlinable
  init(_ keyPath: KeyPath<Root, Elements>, id: Elements.Element.ID) {
    self.lens = ReadLens(keyPath)
    self.id = id
    self.hint = IndexHint()
  }

  /// The element with the id in `root`, or `nil` if none has it.
  @inlinable
  func element(in root: Root) -> Elements.Element? {
    lens.read(root) { elements in index(in: elements).map { elements[$0] } }
  }

  /// Whether an element of `root`'s collection has the id.
  @inlinable
  func isPresent(in root: Root) -> Bool {
    lens.read(root) { index(in: $0) != nil }
  }

  @inlinable
  func index(in elements: Elements) -> Elements.Index? {
    if let index = hint.index, index >= elements.startIndex, index < elements.endIndex, elements[index].id == id {
      return index
    }
    guard let index = elements.firstIndex(where: { $0.id == id }) else { return nil }
    hint.index = index
    return index
  }
}

/// The position where an element finder last found its element.
@usableFromInline
final class IndexHint<Index>: Sendable {
  // Safety: element finders run only inside their core's isolation
  // (publishing, checking handles after an action, a handle's `dispatch`
  // or `state`), one at a time, and the hint is only a guess, checked
  // before use.
  // Exclusivity unchecked for the same reason: one access at a time.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var index: Index?

  @inlinable
  init() {}
}
