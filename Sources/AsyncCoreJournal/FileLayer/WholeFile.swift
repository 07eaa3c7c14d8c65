#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A whole file read to its end, or written in place of what a path names:
/// a recording's file, which may be a pipe, a device or a link.
enum WholeFile {
  /// The bytes of the file at `path`, read until the end: a pipe or a
  /// device too, whose size `fstat` does not know.
  static func read(_ path: String, limit: Int = readLimit) throws(JournalError) -> [UInt8] {
    let descriptor = try FileSystem.open(path, O_RDONLY)
    defer { systemClose(descriptor) }
    var bytes: [UInt8] = []
    var info = stat()
    if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG { bytes.reserveCapacity(Int(info.st_size)) }
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
      if count < 0, errno == EINTR { continue }
      guard count >= 0 else { throw .fileSystem(operation: "read", path: path, errno: errno) }
      if count == 0 { return bytes }
      // An endless source (`/dev/zero`) or a huge file is refused, not
      // read until memory runs out.
      guard bytes.count + count <= limit else { throw .fileSystem(operation: "read", path: path, errno: EFBIG) }
      bytes += chunk[..<count]
    }
  }

  /// The most bytes ``read(_:limit:)`` reads by default: 256 MiB.
  static var readLimit: Int { 256 << 20 }

  /// Writes `bytes` to what `path` names, as `html -o` does, never
  /// replacing anything but a regular file.
  ///
  /// A link is followed to the file it names, which is replaced and the
  /// link kept; a regular file (or none) is replaced atomically by a
  /// temporary file of a unique name beside it, created exclusively,
  /// synced, renamed over it, and the directory synced; a pipe or a device
  /// is written through, never replaced (a pipe whose reader left is
  /// `EPIPE`, never a `SIGPIPE`); a socket cannot be opened (`ENXIO`) and
  /// is left as it is; a directory is `EISDIR`.
  static func write(_ bytes: [UInt8], to path: String) throws(JournalError) {
    // A pipe or device, through links or not, is opened by the path as
    // given: a magic link (`/dev/stdout`) names no file to follow by hand.
    var named = stat()
    if stat(path, &named) == 0, named.st_mode & S_IFMT != S_IFREG, named.st_mode & S_IFMT != S_IFDIR,
      try writeThrough(path, bytes)
    {
      return
    }
    var target = path
    // The kernel's own limit on links followed in one path (ELOOP past it).
    for _ in 0..<40 {
      var info = stat()
      guard lstat(target, &info) == 0 else {
        guard errno == ENOENT else { throw .fileSystem(operation: "lstat", path: target, errno: errno) }
        if try replace(target, with: bytes, mode: nil) { return }
        continue
      }
      switch info.st_mode & S_IFMT {
      case S_IFREG:
        if try replace(target, with: bytes, mode: info.st_mode & 0o777) { return }
      case S_IFLNK:
        target = try linkTarget(target)
      case S_IFDIR:
        throw .fileSystem(operation: "open", path: target, errno: EISDIR)
      default:
        if try writeThrough(target, bytes) { return }
      }
    }
    throw .fileSystem(operation: "open", path: path, errno: ELOOP)
  }

  /// Where the link at `path` points, relative to the link's own folder.
  private static func linkTarget(_ path: String) throws(JournalError) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count >= 0 else { throw .fileSystem(operation: "readlink", path: path, errno: errno) }
    let link = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard !link.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { return link }
    return String(path[...slash]) + link
  }

  /// Replaces the regular file at `path` (or makes it) atomically, with
  /// `mode` (the replaced file's permissions). `false` when `path` became
  /// something else meanwhile, which the caller looks at again; nothing
  /// was changed then.
  private static func replace(_ path: String, with bytes: [UInt8], mode: mode_t?) throws(JournalError) -> Bool {
    let slash = path.lastIndex(of: "/")
    let directoryPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    let directory = try FileSystem.open(directoryPath, O_RDONLY | O_DIRECTORY)
    defer { systemClose(directory) }
    let (temporary, descriptor) = try createTemporary(beside: path)
    defer { systemClose(descriptor) }
    do throws(JournalError) {
      if let mode, fchmod(descriptor, mode) != 0 {
        throw .fileSystem(operation: "fchmod", path: temporary, errno: errno)
      }
      let (_, failure) = FileSystem.write(descriptor, bytes, at: 0)
      guard failure == 0 else { throw .writeFailed(path: temporary, errno: failure) }
      try FileSystem.sync(descriptor, path: temporary)
      // A device or a link made at `path` since it was looked at is not replaced.
      var info = stat()
      if lstat(path, &info) == 0 ? info.st_mode & S_IFMT != S_IFREG : errno != ENOENT {
        unlink(temporary)
        return false
      }
      try FileSystem.rename(temporary, to: path)
    } catch {
      unlink(temporary)  // made by this call (O_EXCL): no one else's file
      throw error
    }
    try FileSystem.sync(directory, path: directoryPath)
    return true
  }

  /// A new file `path.<random>.tmp`, made by this call: `O_EXCL` refuses a
  /// name that exists, a link planted there included (`O_NOFOLLOW`).
  private static func createTemporary(beside path: String) throws(JournalError) -> (String, Int32) {
    var generator = SystemRandomNumberGenerator()
    while true {
      let suffix = String(generator.next() as UInt64, radix: 16)
      let temporary = path + "." + String(repeating: "0", count: 16 - suffix.count) + suffix + ".tmp"
      do {
        return (temporary, try FileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW))
      } catch {
        guard case .fileSystem(_, _, EEXIST) = error else { throw error }
      }
    }
  }

  /// Writes `bytes` through the pipe, device or socket at `path`, opened
  /// without `O_CREAT` or `O_TRUNC` (a pipe's open waits for a reader, as
  /// any writer's). `false` when `path` is a regular file by the time it
  /// is opened, which the caller replaces instead.
  private static func writeThrough(_ path: String, _ bytes: [UInt8]) throws(JournalError) -> Bool {
    let descriptor = try FileSystem.open(path, O_WRONLY | O_NOCTTY)
    defer { systemClose(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw .fileSystem(operation: "fstat", path: path, errno: errno) }
    if info.st_mode & S_IFMT == S_IFREG { return false }
    // A pipe whose reader left is EPIPE for this call, not a SIGPIPE that
    // ends the process: the signal is blocked for this thread while it
    // writes, and one it raised is taken before the mask is restored.
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
    var done = 0
    var failure: Int32 = 0
    while done < bytes.count {
      let written = bytes[done...].withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
      if written < 0, errno == EINTR { continue }
      guard written > 0 else {
        failure = written < 0 ? errno : EIO
        break
      }
      done += written
    }
    if failure == EPIPE, sigismember(&previous, SIGPIPE) == 0 {
      var none = timespec(tv_sec: 0, tv_nsec: 0)
      _ = sigtimedwait(&pipeSignal, nil, &none)
    }
    pthread_sigmask(SIG_SETMASK, &previous, nil)
    if failure != 0 { throw .writeFailed(path: path, errno: failure) }
    return true
  }
}

// The C library's names, which `WholeFile`'s own methods shadow.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(descriptor, buffer, count)
}
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
  write(descriptor, buffer, count)
}
