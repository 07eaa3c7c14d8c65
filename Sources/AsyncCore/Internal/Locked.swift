import Synchronization

/// A `Synchronization.Mutex` whose critical sections ThreadSanitizer can see.
///
/// On Linux, `Mutex` locks with futex calls inside the uninstrumented
/// `libswiftSynchronization`, so ThreadSanitizer sees no happens-before edge
/// between two critical sections and reports every access to the protected
/// value as a race (reproduced here with two tasks appending to a
/// `Mutex<[Int]>`: the count is right, the report is false). Each critical
/// section therefore begins with an acquiring load and ends with a releasing
/// store of an atomic the sanitizer does instrument. The mutex already orders
/// the sections, so this adds no synchronization, only its visibility; on
/// x86-64 both are plain moves.
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
