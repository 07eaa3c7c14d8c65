#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The "journal" family's files (see JournalBenchmarks.swift): the raw
// baselines, which write the journal's frames with plain system calls, and
// the scratch directories every row writes in.

// MARK: - Raw baselines

/// `write` + `fdatasync` of one frame at a time, cycling through `frames`,
/// for `duration`, into a new file.
func rawPerRecordSync(_ frames: [[UInt8]], for duration: Duration) -> Sample {
  let scratch = ScratchDirectory("raw-sync")
  defer { scratch.remove() }
  let file = openLikeASegment(in: scratch.path)
  defer { close(file) }
  let clock = ContinuousClock()
  let start = clock.now
  let deadline = start + duration
  var count = 0
  repeat {
    writeAll(file, frames[count % frames.count])
    syncData(file)
    count += 1
  } while clock.now < deadline
  return Sample(operations: count, duration: clock.now - start)
}

/// One `write` of every frame (joined beforehand) and one `fdatasync`.
func rawSequentialWrite(_ frames: [[UInt8]]) -> Sample {
  let scratch = ScratchDirectory("raw-sequential")
  defer { scratch.remove() }
  var bytes: [UInt8] = []
  bytes.reserveCapacity(frames.reduce(0) { $0 + $1.count })
  for frame in frames { bytes += frame }
  let file = openLikeASegment(in: scratch.path)
  defer { close(file) }
  let clock = ContinuousClock()
  let start = clock.now
  writeAll(file, bytes)
  syncData(file)
  return Sample(operations: frames.count, duration: clock.now - start)
}

// MARK: - Files

/// A directory of its own under the temporary directory (`TMPDIR`, or
/// /tmp), removed with everything in it by ``remove()``.
struct ScratchDirectory {
  let path: String

  init(_ label: String) {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/asynccore-benchmark-\(label)-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.map { mkdtemp($0) != nil } ?? false
    }
    guard made else { fatalError("AsyncCoreBenchmarks: could not make a directory under \(base): errno \(errno)") }
    path = template.withUnsafeBufferPointer { buffer in
      buffer.baseAddress.map { String(cString: $0) } ?? ""
    }
  }

  /// Removes the directory and everything under it (children first, links
  /// not followed).
  func remove() {
    if !removeTree(path) { print("Could not remove all of \(path) (errno \(errno))") }
  }
}

/// Removes `path`: a file, or a directory after what it holds (links are
/// removed, not followed). Whether everything went.
private func removeTree(_ path: String) -> Bool {
  var status = stat()
  guard lstat(path, &status) == 0 else { return false }
  var removed = true
  if status.st_mode & S_IFMT == S_IFDIR, let directory = opendir(path) {
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    closedir(directory)
    for name in names { removed = removeTree(path + "/" + name) && removed }
  }
  return remove(path) == 0 && removed
}

/// A new file in `directory` set up as the journal sets up a segment
/// before its first record: a header's worth of bytes written, the file
/// and the directory synced. Then a record's `fdatasync` pays for the
/// record alone, not for the file's creation.
func openLikeASegment(in directory: String) -> Int32 {
  let file = openForWriting(directory + "/records")
  writeAll(file, [UInt8](repeating: 0, count: 96))
  guard fsync(file) == 0 else { fatalError("AsyncCoreBenchmarks: fsync failed: errno \(errno)") }
  let parent = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
  guard parent >= 0, fsync(parent) == 0 else {
    fatalError("AsyncCoreBenchmarks: could not sync \(directory): errno \(errno)")
  }
  close(parent)
  return file
}

private func openForWriting(_ path: String) -> Int32 {
  let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
  guard file >= 0 else { fatalError("AsyncCoreBenchmarks: could not create \(path): errno \(errno)") }
  return file
}

func writeAll(_ file: Int32, _ bytes: [UInt8]) {
  bytes.withUnsafeBytes { buffer in
    var offset = 0
    while offset < buffer.count {
      let written = write(file, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { fatalError("AsyncCoreBenchmarks: write failed: errno \(errno)") }
      offset += written
    }
  }
}

func syncData(_ file: Int32) {
  #if canImport(Darwin)
    let result = fcntl(file, F_FULLFSYNC)
  #else
    let result = fdatasync(file)
  #endif
  guard result == 0 else { fatalError("AsyncCoreBenchmarks: fdatasync failed: errno \(errno)") }
}
