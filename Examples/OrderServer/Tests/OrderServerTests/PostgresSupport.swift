import Foundation
import Logging
import NIOHTTP1
import OrderServer
import PostgresNIO
import SSEClient
import Synchronization
import Testing

/// The PostgreSQL server the tests share: `ASYNCCORE_POSTGRES_URL`, as
/// `scripts/postgres start DIR` prints it, and `ASYNCCORE_POSTGRES_DIR`, the
/// DIR, for the test that stops and starts it.
enum SharedPostgres {
  static var url: String? { ProcessInfo.processInfo.environment["ASYNCCORE_POSTGRES_URL"] }
  static var directory: String? { ProcessInfo.processInfo.environment["ASYNCCORE_POSTGRES_DIR"] }
  /// CI sets `ASYNCCORE_REQUIRE_POSTGRES=1`: a missing server fails instead.
  static var isRequired: Bool { ProcessInfo.processInfo.environment["ASYNCCORE_REQUIRE_POSTGRES"] == "1" }
  static var isAvailable: Bool { url != nil || isRequired }

  static let skipped =
    "no PostgreSQL server: run `scripts/postgres start DIR` from the repository's root, export the "
    + "ASYNCCORE_POSTGRES_URL it prints and ASYNCCORE_POSTGRES_DIR=DIR"

  static func requiredURL() throws -> String {
    guard let url else {
      Issue.record("ASYNCCORE_POSTGRES_URL is not set and ASYNCCORE_REQUIRE_POSTGRES=1: \(skipped)")
      throw CancellationError()
    }
    return url
  }

  static let logger = Logger(label: "OrderServerTests")

  /// A connection of the test's own, for what an operator would do.
  static func connect() async throws -> PostgresConnection {
    let configuration = try PostgresURL(requiredURL()).configuration
    return try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
  }

  /// `scripts/postgres stop|start DIR`: the test's operator.
  static func control(_ command: String) async throws {
    guard let directory else {
      Issue.record("ASYNCCORE_POSTGRES_DIR is not set: \(skipped)")
      throw CancellationError()
    }
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../../../scripts/postgres").standardizedFileURL.path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [script, command, directory]
    process.standardOutput = FileHandle.nullDevice
    // Its termination handler, not waitUntilExit(), which can miss the
    // exit when called from a task (the child is left a zombie).
    let (exited, exit) = AsyncStream<Int32>.makeStream()
    process.terminationHandler = { process in
      exit.yield(process.terminationStatus)
      exit.finish()
    }
    try process.run()
    var statuses = exited.makeAsyncIterator()
    let status = await statuses.next() ?? -1
    guard status == 0 else {
      throw ServerProcess.Failure(description: "scripts/postgres \(command) exited \(status)")
    }
  }
}

/// Order servers on one namespace of the shared server, each on a port
/// picked before it starts (the port names it to the others).
struct Cluster: Sendable {
  let namespace = "os" + String(UInt64.random(in: 0...UInt64.max), radix: 36)

  func start(_ extra: [String] = []) async throws -> ServerProcess {
    let port = try freePort()
    return try await ServerProcess.start(
      ["--port", "\(port)", "--postgres", try SharedPostgres.requiredURL(), "--namespace", namespace] + extra)
  }

  /// Every entity's records left after its snapshot, as sequence numbers.
  func sequences() async throws -> [String: [Int64]] {
    let connection = try await SharedPostgres.connect()
    var result: [String: [Int64]] = [:]
    let rows = try await connection.query(
      "SELECT entity, sequence FROM \(unescaped: namespace)_records ORDER BY entity, sequence",
      logger: SharedPostgres.logger)
    for try await (entity, sequence) in rows.decode((String, Int64).self) {
      result[entity, default: []].append(sequence)
    }
    var snapshots: [String: Int64] = [:]
    let snapshotRows = try await connection.query(
      "SELECT entity, sequence FROM \(unescaped: namespace)_snapshots", logger: SharedPostgres.logger)
    for try await (entity, sequence) in snapshotRows.decode((String, Int64).self) { snapshots[entity] = sequence }
    try await connection.close()
    // An entity's history: its snapshot's number, then each record's.
    for (entity, sequence) in snapshots { result[entity, default: []].insert(sequence, at: 0) }
    return result
  }

  func drop() async throws {
    let connection = try await SharedPostgres.connect()
    for suffix in ["records", "snapshots", "meta"] {
      try await connection.query(
        "DROP TABLE IF EXISTS \(unescaped: namespace)_\(unescaped: suffix)", logger: SharedPostgres.logger)
    }
    for function in ["activate", "commit"] {
      try await connection.query(
        "DROP FUNCTION IF EXISTS \(unescaped: namespace)_\(unescaped: function)", logger: SharedPostgres.logger)
    }
    try await connection.close()
  }
}

/// A port nothing listens on now (bound, read, and let go).
func freePort() throws -> Int {
  let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard socket >= 0 else { throw ServerProcess.Failure(description: "socket() failed: errno \(errno)") }
  defer { close(socket) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  address.sin_port = 0
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) { pointer in
    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
      bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
    }
  }
  guard bound else { throw ServerProcess.Failure(description: "bind() failed: errno \(errno)") }
  return Int(UInt16(bigEndian: address.sin_port))
}

/// A request to one of several servers, as a client behind a load
/// balancer sees it: a 307 followed to the owner it names, a server that
/// refuses connections replaced by the next one.
struct Balanced: Sendable {
  let ports: [Int]

  /// The response, after at most `redirects` redirects, and the server
  /// that gave it; nil when none did (every server refused, the one
  /// redirected to refused, or a connection closed unanswered). `first`
  /// picks the server tried first; one that refuses is put in `dead`.
  func request(
    _ method: HTTPMethod, _ path: String, body: String? = nil, first: Int, redirects: Int = 1,
    dead: borrowing Mutex<Set<Int>>
  ) async -> (port: Int, response: HTTP.Response)? {
    for offset in 0..<ports.count {
      let port = ports[(first + offset) % ports.count]
      if dead.withLock({ $0.contains(port) }) { continue }
      var response: HTTP.Response
      do {
        response = try await HTTP.request(method, path, body: body, port: port)
      } catch is HTTP.NoResponse {
        return nil
      } catch {
        _ = dead.withLock { $0.insert(port) }
        continue
      }
      var target = port
      var left = redirects
      while response.status == 307, left > 0, let next = response.header("Location").flatMap(Self.port(of:)) {
        left -= 1
        target = next
        guard let answer = try? await HTTP.request(method, path, body: body, port: target) else { return nil }
        response = answer
      }
      return (target, response)
    }
    return nil
  }

  /// The port of `http://127.0.0.1:PORT/...`.
  static func port(of location: String) -> Int? {
    guard location.hasPrefix("http://127.0.0.1:") else { return nil }
    let rest = location.dropFirst("http://127.0.0.1:".count)
    return Int(rest.prefix { $0.isNumber })
  }
}
