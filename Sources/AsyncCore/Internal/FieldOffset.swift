/// Where a key path's value is stored inside its root, when the key path is
/// a chain of stored properties of structs: the one place that reads (and
/// writes) a field through a pointer instead of applying the key path.
///
/// Applying a key path goes through the runtime's generic metadata lookups;
/// selectors, `StateLens` and `ReadLens` reach their field through this type
/// instead, and fall back to the key path when it is `nil`.
///
/// ```swift
/// let count = FieldOffset(\Counter.count)   // nil for a computed property, a class, an optional chain
/// let value = count?.read(state) { $0 } ?? state.count
/// ```
@usableFromInline
struct FieldOffset<Root, Value>: Sendable {
  /// The value's byte offset in `Root`.
  @usableFromInline let offset: Int

  /// The offset of the value at `keyPath`, or `nil` when it is not stored
  /// inline in `Root` (what `MemoryLayout.offset(of:)` tells), or when
  /// `Root` is empty (no bytes to point into).
  @inlinable
  init?(_ keyPath: KeyPath<Root, Value>) {
    guard MemoryLayout<Root>.size > 0, let offset = MemoryLayout<Root>.offset(of: keyPath) else { return nil }
    self.offset = offset
  }

  // Safety (for both methods below): `MemoryLayout.offset(of:)` returns an
  // offset only for a key path naming storage stored inline in `Root` at
  // that offset, initialised as a `Value`, so the memory there is bound to
  // `Value`; `Root` is not empty (checked in `init`), so the base address
  // exists. The pointers live only for the call that made them, over
  // bytes that are `root`'s own: a copy that lives for the call (read), or
  // the caller's `inout` root, exclusively ours for the call (modify).
  // `body` receives only the value, never the pointer or `root`.

  /// Runs `body` on the value in `root`.
  @inlinable
  func read<Result>(_ root: Root, _ body: (Value) -> Result) -> Result {
    withUnsafeBytes(of: root) { bytes in
      body((bytes.baseAddress.unsafelyUnwrapped + offset).assumingMemoryBound(to: Value.self).pointee)
    }
  }

  /// Runs `body` on the value in `root`, in place.
  @inlinable
  func modify<Result>(_ root: inout Root, _ body: (inout Value) -> Result) -> Result {
    withUnsafeMutableBytes(of: &root) { bytes in
      body(&(bytes.baseAddress.unsafelyUnwrapped + offset).assumingMemoryBound(to: Value.self).pointee)
    }
  }
}
