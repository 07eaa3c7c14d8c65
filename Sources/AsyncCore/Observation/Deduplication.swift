/// How a registration with `removeDuplicates: isDuplicate` tells a
/// duplicate, decided at registration: `isDuplicate` if given; else `==` when
/// `Value` is `Equatable`; else `==` when the dynamic type is, checked per
/// comparison (any other value is never a duplicate).
///
/// Specialized in the caller's module, so `==` is compiled for a concrete
/// `Value`; never inlined, so the cast does not grow every registering function.
@usableFromInline
struct Deduplication<Value>: Sendable {
  /// Returns `true` when the second value (new) is not to be delivered
  /// after the first (the last one delivered).
  @usableFromInline let isDuplicate: @Sendable (Value, Value) -> Bool
  /// Whether registrations with the same key path may share one group: only
  /// those that compare with `==` (a closure has no identity to share by).
  @usableFromInline let isShareable: Bool

  @inlinable
  @inline(never)
  init(_ isDuplicate: (@Sendable (Value, Value) -> Bool)?) {
    if let isDuplicate {
      self.isDuplicate = isDuplicate
      self.isShareable = false
    } else if let equatable = Value.self as? any Equatable.Type {
      self.isDuplicate = equatable.equality(as: Value.self)
      self.isShareable = true
    } else {
      self.isDuplicate = dynamicEquality(Value.self)
      self.isShareable = false
    }
  }

  /// `keyPath`, the key registrations share a group by, if they may.
  @inlinable
  func sharing(_ keyPath: AnyKeyPath) -> AnyKeyPath? {
    isShareable ? keyPath : nil
  }
}

extension Equatable {
  /// `==` for `Self`, as a comparison of `T`s; `T` must be `Self` (the
  /// caller found `Self` by casting `T.self`).
  @inlinable
  static func equality<T>(as _: T.Type) -> @Sendable (T, T) -> Bool {
    { lhs, rhs in
      // Safety: `T` is `Self` (see above), so the values' memory is bound
      // to `Self`; the pointers are used only inside the calls that made
      // them. (A cast per comparison would cost a runtime call each where
      // the type is not known at compile time.)
      withUnsafePointer(to: lhs) { lhs in
        withUnsafePointer(to: rhs) { rhs in
          UnsafeRawPointer(lhs).assumingMemoryBound(to: Self.self).pointee
            == UnsafeRawPointer(rhs).assumingMemoryBound(to: Self.self).pointee
        }
      }
    }
  }
}

/// `==` for values of `T` whose dynamic type is `Equatable`, checked per
/// comparison, for a value behind an existential; others compare different.
@usableFromInline
func dynamicEquality<T>(_ type: T.Type) -> @Sendable (T, T) -> Bool {
  { lhs, rhs in
    guard let lhs = lhs as? any Equatable else { return false }
    return lhs.isEqual(to: rhs)
  }
}

extension Equatable {
  fileprivate func isEqual(to other: Any) -> Bool {
    guard let other = other as? Self else { return false }
    return self == other
  }
}
