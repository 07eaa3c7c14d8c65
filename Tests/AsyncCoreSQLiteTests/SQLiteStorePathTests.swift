import AsyncCore
import AsyncCoreProcessTestSupport
import AsyncCoreSQLite
import Foundation
import Testing

@Suite("Hostile paths for an entity store", .timeLimit(.minutes(5)))
struct SQLiteStorePathTests {
  @Test("a missing folder is refused with ENOENT, and nothing is made")
  func missingFolder() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let folder = scratch.path + "/missing"
    #expect(throws: SQLiteStoreError.fileSystem(operation: "realpath", path: folder, errno: ENOENT)) {
      try CartStore(path: folder + "/entities.sqlite")
    }
    #expect(!FileManager.default.fileExists(atPath: folder))
    let error = SQLiteStoreError.fileSystem(operation: "realpath", path: folder, errno: ENOENT)
    #expect("\(error)" == "AsyncCoreSQLite: realpath \(folder) failed: No such file or directory (errno 2)")
  }

  @Test("a directory is refused, never opened")
  func directory() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    #expect(throws: SQLiteStoreError.notAFile(path: scratch.path)) { try CartStore(path: scratch.path) }
  }

  @Test("a FIFO is refused before anything opens it (an open would block)")
  func fifo() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    #expect(mkfifo(scratch.database, 0o644) == 0)
    #expect(throws: SQLiteStoreError.notAFile(path: scratch.database)) { try CartStore(path: scratch.database) }
  }

  @Test("a device file (/dev/null) is refused, neither opened nor replaced")
  func device() throws {
    #expect(throws: SQLiteStoreError.notAFile(path: "/dev/null")) { try CartStore(path: "/dev/null") }
    var info = stat()
    #expect(stat("/dev/null", &info) == 0)
    #expect(info.st_mode & S_IFMT == S_IFCHR)
    #expect(!FileManager.default.fileExists(atPath: "/dev/null.lock"))
    #expect(!FileManager.default.fileExists(atPath: "/dev/null-wal"))
  }

  @Test("a symbolic link to a store is followed: the store is its target's, and so is the lock")
  func symbolicLinkToAStore() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    try await append([.add("tea")], to: try await store.journal(for: "ada"))
    await store.close()
    let link = scratch.path + "/link.sqlite"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: scratch.database)

    let linked = try CartStore(path: link)
    let (_, actions) = try await recovered(try await linked.journal(for: "ada"))
    #expect(actions == [.add("tea")])
    #expect(throws: SQLiteStoreError.locked(path: scratch.database)) { try CartStore(path: scratch.database) }
    await linked.close()
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == scratch.database)
  }

  @Test("a symbolic link to a device, or to nothing, is refused and creates nothing")
  func symbolicLinkElsewhere() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let toDevice = scratch.path + "/device.sqlite"
    try FileManager.default.createSymbolicLink(atPath: toDevice, withDestinationPath: "/dev/null")
    #expect(throws: SQLiteStoreError.notAFile(path: toDevice)) { try CartStore(path: toDevice) }
    let dangling = scratch.path + "/dangling.sqlite"
    try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: scratch.path + "/nowhere")
    #expect(throws: SQLiteStoreError.fileSystem(operation: "realpath", path: dangling, errno: ENOENT)) {
      try CartStore(path: dangling)
    }
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/nowhere"))
  }

  @Test("a second store on the same file in this process is refused as locked, until the first closes")
  func secondStoreInThisProcess() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    #expect(throws: SQLiteStoreError.locked(path: scratch.database)) { try CartStore(path: scratch.database) }
    await store.close()
    let second = try CartStore(path: scratch.database)
    await second.close()
  }

  @Test("a child process forked while the store was open, not yet exec'd, does not keep the store locked after close")
  func childForkedWhileOpen() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database)
    // The child shares every descriptor, the store's lock among them, as a
    // child of posix_spawn does until its exec. It waits to be killed, with
    // async-signal-safe calls only: it may hold other tests' pipes too, so
    // nothing here waits for it to end by itself.
    let child = fork()
    if child == 0 {
      while true { pause() }
    }
    #expect(child > 0)
    await store.close()
    let second = Result { try CartStore(path: scratch.database) }
    kill(child, SIGKILL)
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0, errno == EINTR {}
    let reopened = try second.get()
    await reopened.close()
  }

  @Test(
    "a store on a file another process holds the lock of is refused as locked",
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "needs util-linux's flock"))
  func secondStoreInAnotherProcess() async throws {
    let flock = "/usr/bin/flock"
    let scratch = try Scratch()
    defer { scratch.remove() }
    let holder = try spawn(
      flock, arguments: ["--exclusive", scratch.database + ".lock", "sh", "-c", "echo held; cat"])
    defer { close(holder.output) }
    // The child prints once it holds the lock, and holds it until its input ends.
    var line = [UInt8](repeating: 0, count: 5)
    var filled = 0
    while filled < line.count {
      let count = line[filled...].withUnsafeMutableBytes { read(holder.output, $0.baseAddress, $0.count) }
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { break }
      filled += count
    }
    #expect(String(decoding: line[..<filled], as: UTF8.self) == "held\n")
    #expect(throws: SQLiteStoreError.locked(path: scratch.database)) { try CartStore(path: scratch.database) }
    close(holder.input)
    var status: Int32 = 0
    while waitpid(holder.pid, &status, 0) < 0, errno == EINTR {}
    let store = try CartStore(path: scratch.database)
    await store.close()
  }

  @Test("a file that is not a database is refused and left byte for byte as it was")
  func notADatabase() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bytes = Array(String(repeating: "not a database, just text. ", count: 200).utf8)
    try Data(bytes).write(to: URL(fileURLWithPath: scratch.database))
    #expect(throws: SQLiteStoreError.notADatabase(path: scratch.database)) { try CartStore(path: scratch.database) }
    #expect(try contents(of: scratch.database) == bytes)
    #expect(!FileManager.default.fileExists(atPath: scratch.database + "-wal"))
  }

  @Test("another program's SQLite database is refused and left as it was")
  func foreignDatabase() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    do {
      let raw = try RawDatabase(scratch.database)
      #expect(raw.execute("CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES('keep me')") == 0)
    }
    let before = try contents(of: scratch.database)
    #expect(throws: SQLiteStoreError.notADatabase(path: scratch.database)) { try CartStore(path: scratch.database) }
    #expect(try contents(of: scratch.database) == before)
    let raw = try RawDatabase(scratch.database)
    #expect(raw.rows("PRAGMA journal_mode") == [["delete"]])
  }
}
