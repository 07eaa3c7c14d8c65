import AsyncCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// Where `html -o` writes: never over what the inspector reads, and as
// `Recording.write(to:)` writes.
extension Inspection {
  /// Refuses an output that is the input, or a file in the journal's
  /// directory: the inspector never changes what it reads.
  static func refuseOverwriting(_ source: InspectorSource, with file: String) throws(InspectorFailure) {
    switch source {
    case .recording(let path):
      if sameFile(file, path) {
        throw InspectorFailure("-o \(logSafe(file)) is the recording it reads: choose another file")
      }
    case .journal(let directory):
      let output = resolved(file)
      let journal = resolved(directory)
      if output == journal || output.hasPrefix(journal + "/") {
        throw InspectorFailure("-o \(logSafe(file)) is inside the journal it reads: choose a file elsewhere")
      }
    }
  }

  /// Whether `a` and `b` are one file (a hard link to it included).
  static func sameFile(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    return stat(a, &first) == 0 && stat(b, &second) == 0 && first.st_dev == second.st_dev
      && first.st_ino == second.st_ino
  }

  /// `path` with its links and `..` resolved, as far as it exists (a file
  /// not made yet: its folder resolved, then its name).
  static func resolved(_ path: String) -> String {
    if let real = realpath(path, nil) {
      defer { free(real) }
      return String(cString: real)
    }
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    let folder = parts.count > 1 ? parts.dropLast().joined(separator: "/") : "."
    guard let real = realpath(folder.isEmpty ? "/" : folder, nil) else { return path }
    defer { free(real) }
    let base = String(cString: real)
    return (base == "/" ? "" : base) + "/" + (parts.last.map(String.init) ?? "")
  }

  /// Writes `bytes` to `file` as `Recording.write(to:)` does: a regular
  /// file replaced atomically, through a link, a pipe or a device written
  /// through (`-o /dev/stdout` works); every failure is one line.
  static func writeFile(_ bytes: [UInt8], to file: String) throws(InspectorFailure) {
    do throws(JournalError) {
      try WholeFile.write(bytes, to: file)
    } catch {
      let code: Int32 =
        switch error {
        case .fileSystem(_, _, let code), .writeFailed(_, let code), .syncFailed(_, let code): code
        default: EIO
        }
      throw InspectorFailure("cannot write \(logSafe(file)): \(systemMessage(code))")
    }
  }
}
