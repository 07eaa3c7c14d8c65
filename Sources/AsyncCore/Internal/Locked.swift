import Synchronization

/// A `Synchronization.Mutex` whose critical sections ThreadSanitizer can see.
///
/// On Linux, `Mutex` locks through futex calls ThreadSanitizer cannot see,
/// so it reports the protected value as racing. Each critical section begins
/// with an acquiring load and ends with a releasing store of an atomic the
/// sanitizer sees: no new synchronization, only its visibility.
///
/// `package`: AsyncCoreTesting locks with it too.
@usableFromInline
package struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
  @usableFromInline let mutex: Mutex<Value>
  @usableFromInline let edge = Atomic<Bool>(false)

  @inlinable
  package init(_ value: consuming sending Value) {
    self.mutex = Mutex(value)
  }

  @inlinable @inline(__always)
  package borrowing func withLock<Result: ~Copyable>(
    _ body: (inout sending Value) -> sending Result
  ) -> sending Result {
    mutex.withLock { value in
      _ = edge.load(ordering: .acquiring)
      defer { edge.store(false, ordering: .releasing) }
      return body(&value)
    }
  }
}
