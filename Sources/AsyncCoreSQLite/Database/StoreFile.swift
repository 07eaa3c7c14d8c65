#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The database's path, checked before SQLite sees it, and the store's
/// lock beside it.
///
/// Only a regular file, or nothing (a new database), is opened: a
/// directory, FIFO (SQLite's open would block on it), device or socket is
/// refused after one `lstat`, never opened. A symbolic link is followed to
/// a regular file, as ``FileJournal`` follows a linked directory: the store
/// then works on the link's target, its lock and `-wal` beside that.
struct StoreFile {
  /// As given: what errors name.
  let path: String
  /// The file's real path (its folder's, for a new file): what SQLite opens.
  let resolvedPath: String
  /// The folder holding it, synced once the database exists.
  let folder: String
  /// `<resolvedPath>.lock`, held with `flock` until the writer closes.
  let lockDescriptor: Int32

  static func open(_ path: String) throws(SQLiteStoreError) -> StoreFile {
    let (folder, name) = split(path)
    guard let realFolder = realpath(folder, nil) else {
      throw .fileSystem(operation: "realpath", path: folder, errno: errno)
    }
    var resolved = String(cString: realFolder) + "/" + name
    free(realFolder)
    switch try kind(of: resolved) {
    case .missing, .regular: break
    case .other: throw .notAFile(path: path)
    case .link:
      guard let target = realpath(resolved, nil) else {
        throw .fileSystem(operation: "realpath", path: path, errno: errno)
      }
      resolved = String(cString: target)
      free(target)
      guard try kind(of: resolved) == .regular else { throw .notAFile(path: path) }
    }
    // SQLite opens these beside the database: none may be a FIFO or a device.
    for sibling in [resolved + "-wal", resolved + "-shm"] {
      switch try kind(of: sibling) {
      case .missing, .regular: continue
      case .link, .other: throw .notAFile(path: sibling)
      }
    }
    let lockPath = resolved + ".lock"
    let descriptor = WriterConnection.retryingInterrupts {
      openFile(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
    }
    guard descriptor >= 0 else {
      let error = errno
      if error == ELOOP { throw .notAFile(path: lockPath) }
      throw .fileSystem(operation: "open", path: lockPath, errno: error)
    }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      closeDescriptor(descriptor)
      throw .notAFile(path: lockPath)
    }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let error = errno
      closeDescriptor(descriptor)
      if error == EWOULDBLOCK { throw .locked(path: path) }
      throw .fileSystem(operation: "flock", path: lockPath, errno: error)
    }
    // Checked again under the lock: the path may have changed since.
    let now = Result { () throws(SQLiteStoreError) in try kind(of: resolved) }
    guard case .success(let kind) = now, kind == .missing || kind == .regular else {
      releaseLock(descriptor)
      if case .failure(let error) = now { throw error }
      throw .notAFile(path: path)
    }
    return StoreFile(
      path: path, resolvedPath: resolved, folder: String(resolved[..<lastSlash(resolved)]), lockDescriptor: descriptor)
  }

  private enum Kind { case missing, regular, link, other }

  /// What is at `path`, by `lstat` (not following a link).
  private static func kind(of path: String) throws(SQLiteStoreError) -> Kind {
    var info = stat()
    guard lstat(path, &info) == 0 else {
      if errno == ENOENT { return .missing }
      throw .fileSystem(operation: "lstat", path: path, errno: errno)
    }
    switch info.st_mode & S_IFMT {
    case S_IFREG: return .regular
    case S_IFLNK: return .link
    default: return .other
    }
  }

  /// The folder and the name in `path` ("." for a bare name).
  private static func split(_ path: String) -> (folder: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let folder = path[..<slash]
    return (folder.isEmpty ? "/" : String(folder), String(path[path.index(after: slash)...]))
  }

  private static func lastSlash(_ path: String) -> String.Index {
    path.lastIndex(of: "/") ?? path.startIndex
  }

  /// `fsync` of the folder: the database's and its WAL's entries survive a
  /// power loss (SQLite syncs the folder only for files it syncs itself).
  func syncFolder() throws(SQLiteStoreError) {
    let descriptor = openFile(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
    guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: folder, errno: errno) }
    defer { closeDescriptor(descriptor) }
    guard WriterConnection.retryingInterrupts({ fsync(descriptor) }) == 0 else {
      throw .fileSystem(operation: "fsync", path: folder, errno: errno)
    }
  }
}

/// `open(2)`, under a name no `open` method shadows.
@inline(__always) func openFile(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
  open(path, flags, mode)
}
