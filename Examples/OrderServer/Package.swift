// swift-tools-version: 6.2
import PackageDescription

// An HTTP service on Hummingbird, with a registry of entities (one per
// customer) journaled in SQLite or, shared by several processes, on
// PostgreSQL. A package of its own, so that AsyncCore's graph never sees
// Hummingbird.
let package = Package(
  name: "OrderServer",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "order-server", targets: ["OrderServerMain"]),
    // The load report's SSE fan-out: N clients on one customer's stream.
    .executable(name: "sse-fanout", targets: ["SSEFanout"]),
    // The load report's activation of a passive customer from PostgreSQL.
    .executable(name: "pg-activation", targets: ["PostgresActivation"]),
  ],
  dependencies: [
    .package(name: "AsyncCore", path: "../..", traits: ["ServiceLifecycle", "Logging", "Metrics", "Postgres"]),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
  ],
  targets: [
    // The domain, the routes and the two backends (entities, and the load
    // report's baseline over a Mutex); what the tests drive.
    .target(
      name: "OrderServer",
      dependencies: [
        .product(name: "AsyncCore", package: "AsyncCore"),
        .product(name: "AsyncCoreSQLite", package: "AsyncCore"),
        .product(name: "AsyncCoreJournal", package: "AsyncCore"),
        .product(name: "AsyncCorePostgres", package: "AsyncCore"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
      ]),
    .executableTarget(name: "OrderServerMain", dependencies: ["OrderServer"]),
    // A server-sent events client on SwiftNIO, for the tests and the fan-out.
    .target(
      name: "SSEClient",
      dependencies: [
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ]),
    .executableTarget(name: "SSEFanout", dependencies: ["SSEClient"]),
    .executableTarget(
      name: "PostgresActivation",
      dependencies: [
        "OrderServer",
        .product(name: "AsyncCore", package: "AsyncCore"),
        .product(name: "AsyncCorePostgres", package: "AsyncCore"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    .testTarget(
      name: "OrderServerTests",
      dependencies: [
        "OrderServer", "SSEClient",
        .product(name: "AsyncCore", package: "AsyncCore"),
        .product(name: "AsyncCoreTesting", package: "AsyncCore"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ]),
  ],
  swiftLanguageModes: [.v6]
)
