#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A journal's directory, held open from its opening to its close: every
/// file is opened, created, renamed and removed relative to this descriptor
/// (`openat`, `renameat`, `unlinkat`), so the journal never writes into a
/// directory that took the place of its own at the path.
///
/// It also knows its device and inode, to tell (``whereabouts()``) when the
/// path no longer leads to it: removed (`rm -rf`), moved or replaced.
struct JournalDirectory: Sendable {
  /// As given to `Journal.open`: what errors name.
  let path: String
  /// The path resolved when opened (`realpath`): what the identity check
  /// looks up, so that a later `chdir` does not make a relative path miss.
  let resolvedPath: String
  let descriptor: Int32
  let device: UInt64
  let inode: UInt64

  /// Makes the directory at `path` if it is missing (its parent must
  /// exist) and opens it.
  static func open(_ path: String) throws(JournalError) -> JournalDirectory {
    guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
      throw .fileSystem(operation: "mkdir", path: path, errno: errno)
    }
    let descriptor = try FileSystem.open(path, O_RDONLY | O_DIRECTORY)
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      let error = errno
      systemClose(descriptor)
      throw .fileSystem(operation: "fstat", path: path, errno: error)
    }
    guard let resolved = realpath(path, nil) else {
      let error = errno
      systemClose(descriptor)
      throw .fileSystem(operation: "realpath", path: path, errno: error)
    }
    defer { free(resolved) }
    return JournalDirectory(
      path: path, resolvedPath: String(cString: resolved), descriptor: descriptor,
      device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
  }

  /// `nil` while the directory is still at its path; otherwise why not
  /// (``JournalError/directoryRemoved(path:)``). One `stat`.
  func whereabouts() -> JournalError? {
    var info = stat()
    guard stat(resolvedPath, &info) == 0 else {
      let error = errno
      return error == ENOENT || error == ENOTDIR
        ? .directoryRemoved(path: path) : .fileSystem(operation: "stat", path: path, errno: error)
    }
    // The inode cannot be reused while this descriptor holds it, so the
    // same device and inode is the same directory.
    let same = UInt64(truncatingIfNeeded: info.st_dev) == device && UInt64(truncatingIfNeeded: info.st_ino) == inode
    return same ? nil : .directoryRemoved(path: path)
  }

  /// The path of the file `name` in the directory, for errors and reports.
  func path(_ name: String) -> String { path + "/" + name }

  func open(_ name: String, _ flags: Int32, mode: mode_t = 0o644) throws(JournalError) -> Int32 {
    let result = FileSystem.retryingInterrupts { openat(descriptor, name, flags | O_CLOEXEC, mode) }
    guard result >= 0 else { throw .fileSystem(operation: "open", path: path(name), errno: errno) }
    return result
  }

  func rename(_ name: String, to newName: String) throws(JournalError) {
    guard renameat(descriptor, name, descriptor, newName) == 0 else {
      throw .fileSystem(operation: "rename", path: path(name), errno: errno)
    }
  }

  /// Removes file `name`; one already gone is not an error.
  func remove(_ name: String) throws(JournalError) {
    guard unlinkat(descriptor, name, 0) == 0 || errno == ENOENT else {
      throw .fileSystem(operation: "unlink", path: path(name), errno: errno)
    }
  }

  func exists(_ name: String) -> Bool {
    faccessat(descriptor, name, F_OK, 0) == 0
  }

  /// `fsync` of the directory: its entries, after a rename or a removal.
  func sync() throws(JournalError) {
    try FileSystem.sync(descriptor, path: path)
  }

  /// The names in the directory, without "." and "..".
  func names() throws(JournalError) -> [String] {
    // fdopendir takes the descriptor it is given and closedir closes it: a copy.
    let copy = dup(descriptor)
    guard copy >= 0, let stream = fdopendir(copy) else {
      let error = errno
      if copy >= 0 { systemClose(copy) }
      throw .fileSystem(operation: "opendir", path: path, errno: error)
    }
    defer { closedir(stream) }
    rewinddir(stream)  // the copy shares the original's position
    var names: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// Writes `bytes` as the new file `name`, atomically: a temporary
  /// sibling, written, synced, renamed over `name`, then the directory
  /// synced so that the rename itself survives a crash.
  func writeAtomically(_ bytes: [UInt8], named name: String) throws(JournalError) {
    let temporary = name + ".tmp"
    let file = try open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
    defer { systemClose(file) }
    let (_, failure) = FileSystem.write(file, bytes, at: 0)
    guard failure == 0 else {
      try? remove(temporary)
      throw .writeFailed(path: path(temporary), errno: failure)
    }
    try FileSystem.sync(file, path: path(temporary))
    try rename(temporary, to: name)
    try sync()
  }

  /// As ``writeAtomically(_:named:)``, with the bytes at `range` of the
  /// open file `source` (at `path`), copied a chunk at a time.
  func copyAtomically(from source: Int32, path sourcePath: String, range: Range<Int>, named name: String)
    throws(JournalError)
  {
    let temporary = name + ".tmp"
    let file = try open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
    defer { systemClose(file) }
    var chunk = [UInt8](repeating: 0, count: min(range.count, 1 << 20))
    var offset = range.lowerBound
    while offset < range.upperBound {
      let wanted = min(chunk.count, range.upperBound - offset)
      let count = chunk.withUnsafeMutableBytes { buffer in
        FileSystem.retryingInterrupts {
          Int32(truncatingIfNeeded: pread(source, buffer.baseAddress!, wanted, off_t(offset)))
        }
      }
      guard count >= 0 else { throw .fileSystem(operation: "read", path: sourcePath, errno: errno) }
      if count == 0 { break }  // shorter than it was sized: what is there is copied
      let (_, failure) = FileSystem.write(
        file, count == chunk.count ? chunk : Array(chunk[..<Int(count)]), at: offset - range.lowerBound)
      guard failure == 0 else {
        try? remove(temporary)
        throw .writeFailed(path: path(temporary), errno: failure)
      }
      offset += Int(count)
    }
    try FileSystem.sync(file, path: path(temporary))
    try rename(temporary, to: name)
    try sync()
  }
}
