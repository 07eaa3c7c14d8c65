#if Postgres
  import AsyncCore
  import AsyncCoreJournal
  import AsyncCorePostgres
  import AsyncCoreProcessTestSupport
  import AsyncCoreTestSupport
  import Logging
  import PostgresNIO
  import Testing

  /// The server the tests run against: `ASYNCCORE_POSTGRES_URL`
  /// (`postgres://USER@HOST:PORT/DATABASE`, as `scripts/postgres start`
  /// prints it).
  enum PostgresServer {
    static let variable = "ASYNCCORE_POSTGRES_URL"

    /// `ASYNCCORE_REQUIRE_POSTGRES=1`: a missing server fails the tests
    /// instead of skipping them (CI sets it).
    static var isRequired: Bool { Environment.string("ASYNCCORE_REQUIRE_POSTGRES") == "1" }

    static var isAvailable: Bool { Environment.string(variable) != nil }

    /// Why the tests are skipped.
    static let skipped =
      "no PostgreSQL server: start one with `scripts/postgres start DIR` and export the "
      + "ASYNCCORE_POSTGRES_URL it prints (ASYNCCORE_REQUIRE_POSTGRES=1 fails instead)"

    /// The server's configuration, from the variable.
    static func configuration() throws -> PostgresConnection.Configuration {
      guard let url = Environment.string(variable) else {
        Issue.record("\(variable) is not set and ASYNCCORE_REQUIRE_POSTGRES=1: \(skipped)")
        throw CancellationError()
      }
      // postgres://user[:password]@host:port/database
      guard url.hasPrefix("postgres://"), let at = url.firstIndex(of: "@") else {
        Issue.record("\(variable)=\(url): expected postgres://USER@HOST:PORT/DATABASE")
        throw CancellationError()
      }
      let credentials = url[url.index(url.startIndex, offsetBy: 11)..<at].split(separator: ":", maxSplits: 1)
      let rest = url[url.index(after: at)...]
      let parts = rest.split(separator: "/", maxSplits: 1)
      let hostPort = parts[0].split(separator: ":")
      return PostgresConnection.Configuration(
        host: String(hostPort[0]), port: hostPort.count > 1 ? Int(hostPort[1]) ?? 5432 : 5432,
        username: String(credentials[0]), password: credentials.count > 1 ? String(credentials[1]) : nil,
        database: parts.count > 1 ? String(parts[1]) : nil, tls: .disable)
    }

    static let logger = Logger(label: "AsyncCorePostgresTests")

    /// A connection of the test's own: the other writer, the operator.
    static func connect() async throws -> PostgresConnection {
      try await PostgresConnection.connect(configuration: configuration(), id: 0, logger: logger)
    }
  }

  typealias CartStore = PostgresEntityStore<String, Cart, CartAction>

  /// A namespace of the test's own, its tables dropped at ``drop()``.
  struct Namespace {
    let name = "t" + String(UInt64.random(in: 0...UInt64.max), radix: 36)

    func store(
      owner: String = "node-1", durability: JournalDurability = .everyAction, snapshotEvery: Int? = nil,
      schemaVersion: Int = 1, diagnostics: @escaping @Sendable (EffectFailure) -> Void = { _ in }
    ) async throws -> CartStore {
      try await CartStore(
        configuration: PostgresServer.configuration(), owner: owner, namespace: name, schemaVersion: schemaVersion,
        durability: durability, snapshotEvery: snapshotEvery, logger: PostgresServer.logger,
        diagnostics: diagnostics)
    }

    func drop() async throws {
      let connection = try await PostgresServer.connect()
      for suffix in ["records", "snapshots", "meta"] {
        try await connection.query(
          "DROP TABLE IF EXISTS \(unescaped: name)_\(unescaped: suffix)", logger: PostgresServer.logger)
      }
      for function in ["activate", "commit"] {
        try await connection.query(
          "DROP FUNCTION IF EXISTS \(unescaped: name)_\(unescaped: function)", logger: PostgresServer.logger)
      }
      try await connection.close()
    }
  }
#endif
