#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The system calls the journal makes, each returning a typed error that
/// names the operation, the path and `errno`. No Foundation: a journal costs
/// a few system calls, nothing else.
enum FileSystem {
  static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(JournalError) -> Int32 {
    let descriptor = retryingInterrupts { systemOpen(path, flags | O_CLOEXEC, mode) }
    guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
    return descriptor
  }

  static func size(of descriptor: Int32, path: String) throws(JournalError) -> Int {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw .fileSystem(operation: "fstat", path: path, errno: errno) }
    return Int(info.st_size)
  }

  /// The first `limit` bytes of the file (all of it by default).
  static func read(_ descriptor: Int32, path: String, limit: Int = .max) throws(JournalError) -> [UInt8] {
    let count = min(try size(of: descriptor, path: path), limit)
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    var failure: Int32 = 0
    bytes.withUnsafeMutableBytes { buffer in
      while done < count {
        let result = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(done))
        if result < 0, errno == EINTR { continue }
        if result < 0 {
          failure = errno
          return
        }
        if result == 0 { return }  // shorter than fstat said: read what is there
        done += result
      }
    }
    guard failure == 0 else { throw .fileSystem(operation: "read", path: path, errno: failure) }
    return done == count ? bytes : Array(bytes[..<done])
  }

  /// Writes all of `bytes` at `offset`; on failure, how many were written and `errno`.
  static func write(_ descriptor: Int32, _ bytes: [UInt8], at offset: Int) -> (written: Int, errno: Int32) {
    bytes.withUnsafeBytes { buffer in
      var done = 0
      while done < buffer.count {
        let result = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
        if result < 0, errno == EINTR { continue }
        if result < 0 { return (done, errno) }
        done += result
      }
      return (done, 0)
    }
  }

  /// `fdatasync` (the file's data and the metadata needed to read it back;
  /// on Darwin, which has none, `fsync`).
  static func syncData(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
      let result = retryingInterrupts { fsync(descriptor) }
    #else
      let result = retryingInterrupts { fdatasync(descriptor) }
    #endif
    return result == 0 ? 0 : errno
  }

  /// `fsync`: data and metadata; for a directory, its entries.
  static func sync(_ descriptor: Int32, path: String) throws(JournalError) {
    guard retryingInterrupts({ fsync(descriptor) }) == 0 else {
      throw .fileSystem(operation: "fsync", path: path, errno: errno)
    }
  }

  static func truncate(_ descriptor: Int32, to length: Int, path: String) throws(JournalError) {
    guard retryingInterrupts({ ftruncate(descriptor, off_t(length)) }) == 0 else {
      throw .fileSystem(operation: "ftruncate", path: path, errno: errno)
    }
  }

  static func rename(_ from: String, to: String) throws(JournalError) {
    guard systemRename(from, to) == 0 else { throw .fileSystem(operation: "rename", path: from, errno: errno) }
  }

  static func remove(_ path: String) throws(JournalError) {
    guard unlink(path) == 0 || errno == ENOENT else {
      throw .fileSystem(operation: "unlink", path: path, errno: errno)
    }
  }

  /// The names in the directory, without "." and "..".
  static func names(in path: String) throws(JournalError) -> [String] {
    guard let directory = opendir(path) else { throw .fileSystem(operation: "opendir", path: path, errno: errno) }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// Writes `bytes` to a new file at `path` atomically: a temporary
  /// sibling, written, synced, renamed over `path`, then the directory
  /// synced so that the rename itself survives a crash.
  static func writeAtomically(
    _ bytes: [UInt8], to path: String, directory: Int32, directoryPath: String
  ) throws(JournalError) {
    let temporary = path + ".tmp"
    let descriptor = try open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
    defer { systemClose(descriptor) }
    let (_, failure) = write(descriptor, bytes, at: 0)
    guard failure == 0 else {
      try? remove(temporary)
      throw .writeFailed(path: temporary, errno: failure)
    }
    try sync(descriptor, path: temporary)
    try rename(temporary, to: path)
    try sync(directory, path: directoryPath)
  }

  /// The real-time clock (`CLOCK_REALTIME`) in nanoseconds since
  /// 1970-01-01 00:00 UTC: the time a journal's frames carry. It follows
  /// the system's wall clock, which can be set back; past the year 2262,
  /// beyond `Int64`, it stays at `Int64.max`.
  static func wallClockNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    let (seconds, overflow) = Int64(now.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return now.tv_sec < 0 ? .min : .max }
    let (time, carried) = seconds.addingReportingOverflow(Int64(now.tv_nsec))
    return carried ? .max : time
  }

  static func retryingInterrupts(_ call: () -> Int32) -> Int32 {
    while true {
      let result = call()
      if result < 0, errno == EINTR { continue }
      return result
    }
  }
}

// The C library's names, where `FileSystem`'s own methods shadow them.
@inline(__always) func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
  open(path, flags, mode)
}
@inline(__always) func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
@inline(__always) @discardableResult func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
