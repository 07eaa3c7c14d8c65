import Synchronization

/// A `Synchronization.Mutex` whose critical sections ThreadSanitizer can see.
///
/// The same design as AsyncCore's internal `Locked` (which this module cannot
/// reach): on Linux, `Mutex` locks through futex calls ThreadSanitizer does
/// not see, so each critical section also acquires and releases an atomic
/// the sanitizer does instrument. The mutex already orders the sections;
/// the atomic only makes that order visible.
struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
  private let mutex: Mutex<Value>
  private let edge = Atomic<Bool>(false)

  init(_ value: consuming sending Value) {
    self.mutex = Mutex(value)
  }

  borrowing func withLock<Result: ~Copyable>(
    _ body: (inout sending Value) -> sending Result
  ) -> sending Result {
    mutex.withLock { value in
      _ = edge.load(ordering: .acquiring)
      defer { edge.store(false, ordering: .releasing) }
      return body(&value)
    }
  }
}
