#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A read of an unset key, as `DependencyKey.defaultValue` sees it: where it
/// was read, and which child's `dependencies:` removed the key if one did.
///
/// `defaultValue` takes no parameters, so the read reaches it through a
/// thread-specific slot, set only for that synchronous call (a task local
/// would cost every read of an unset key more).
struct DependencyRead {
  let fileID: StaticString
  let line: UInt
  let removal: ChildPlacement?

  /// Runs `body`, which calls a key's `defaultValue`, with this read as
  /// the thread's current one; the one before is put back after.
  func during<Result>(_ body: () -> Result) -> Result {
    withUnsafePointer(to: self) { pointer in
      let slot = Self.slot
      let outer = pthread_getspecific(slot)
      pthread_setspecific(slot, pointer)
      defer { pthread_setspecific(slot, outer) }
      return body()
    }
  }

  /// The read under way on this thread: `nil` unless `defaultValue` was
  /// called by the subscript.
  static var current: DependencyRead? {
    guard let pointer = pthread_getspecific(slot) else { return nil }
    // Safety: the slot holds a pointer only inside `during`, on this
    // thread, where it points at a `DependencyRead` that `withUnsafePointer`
    // keeps alive for the whole call; `during` puts the outer value back
    // before it returns. Copied out, not kept.
    return pointer.assumingMemoryBound(to: DependencyRead.self).pointee
  }

  /// The thread-specific slot, made once for the process (a static `let`
  /// is initialised once, thread-safely) and never deleted.
  private static let slot: pthread_key_t = {
    var key = pthread_key_t()
    guard pthread_key_create(&key, nil) == 0 else {
      programmerError("internal: no thread-specific key left for the reads of dependencies")
    }
    return key
  }()
}
