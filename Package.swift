// swift-tools-version: 6.2
import PackageDescription

let package = Package(
  name: "AsyncCore",
  // As low as `Synchronization.Mutex` and `Atomic` allow.
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "AsyncCore", targets: ["AsyncCore"]),
    // An app's router: the route stack and deep links. A service that links
    // only AsyncCore does not compile it.
    .library(name: "AsyncCoreNavigation", targets: ["AsyncCoreNavigation"]),
    // Imports Testing: apps link only AsyncCore, their tests this too.
    .library(name: "AsyncCoreTesting", targets: ["AsyncCoreTesting"]),
    // A durable journal's file layer: checksummed records, snapshots,
    // recovery. Opt in: a core without a journal links none of it.
    .library(name: "AsyncCoreJournal", targets: ["AsyncCoreJournal"]),
    // Every entity's journal in one SQLite database (the system's library):
    // the store a registry of entities keeps its passive states in.
    .library(name: "AsyncCoreSQLite", targets: ["AsyncCoreSQLite"]),
    // Every entity's journal on a PostgreSQL server that several processes
    // share, one owner per entity at a time. Empty without the Postgres trait.
    .library(name: "AsyncCorePostgres", targets: ["AsyncCorePostgres"]),
    // Reads a journal's directory without changing it: `verify`, `list`.
    .executable(name: "asynccore-inspect", targets: ["AsyncCoreInspect"]),
    .executable(name: "AsyncCoreBenchmarks", targets: ["AsyncCoreBenchmarks"]),
    .executable(name: "AsyncCoreProfile", targets: ["AsyncCoreProfile"]),
  ],
  // The Swift server ecosystem's integrations, each off by default: a
  // package that enables none resolves and compiles none of them.
  traits: [
    .trait(name: "ServiceLifecycle", description: "Core and Entities as swift-service-lifecycle Services"),
    .trait(name: "Logging", description: "A diagnostics handler that writes to a swift-log Logger"),
    .trait(name: "Metrics", description: "Core and Entities metrics reported through swift-metrics"),
    .trait(name: "Postgres", description: "AsyncCorePostgres: entities on a shared PostgreSQL server (postgres-nio)"),
    .default(enabledTraits: []),
  ],
  dependencies: [
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
  ],
  targets: [
    .target(
      name: "AsyncCore",
      dependencies: [
        .product(
          name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
        .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
        .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
      ]),
    .target(name: "AsyncCoreNavigation", dependencies: ["AsyncCore"]),
    .target(name: "AsyncCoreTesting", dependencies: ["AsyncCore"]),
    .target(name: "AsyncCoreJournal", dependencies: ["AsyncCore"]),
    .target(name: "AsyncCoreSQLite", dependencies: ["AsyncCore", "AsyncCoreJournal", "CSQLite"]),
    .target(
      name: "AsyncCorePostgres",
      dependencies: [
        "AsyncCore", "AsyncCoreJournal",
        .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
        .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Postgres"])),
        .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Postgres"])),
      ]),
    // The child process the journal's fault tests start (kill -9, a full
    // disk, a second opener), of the file layer, of a durable Core and of a
    // registry of entities on SQLite.
    // Not a product: `swift build --build-tests` builds it beside the test
    // binary.
    .executableTarget(
      name: "AsyncCoreJournalProbe", dependencies: ["AsyncCoreJournal", "AsyncCore", "AsyncCoreSQLite"],
      path: "Tests/AsyncCoreJournalProbe"),
    // The journal inspector.
    .executableTarget(
      name: "AsyncCoreInspect", dependencies: ["AsyncCoreJournal", "AsyncCore"]),
    // A name no user's package is likely to have: target names are unique
    // across a package graph.
    .executableTarget(
      name: "AsyncCoreBenchmarks",
      dependencies: [
        "AsyncCore", "AsyncCoreJournal", "AsyncCoreSQLite", "AsyncCoreExecutorExperiment", "CSQLite", "CHeapInfo",
      ]),
    // glibc's count of the heap in use (mallinfo2), for the entities
    // family's memory figures; a header only, nothing to link.
    .systemLibrary(name: "CHeapInfo"),
    // The system's SQLite (Apple's SDKs ship it): AsyncCoreSQLite's engine,
    // and the benchmark's baseline rows.
    .systemLibrary(
      name: "CSQLite", pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
    // A synchronous main for valgrind (see Sources/AsyncCoreProfile/main.swift).
    .executableTarget(
      name: "AsyncCoreProfile", dependencies: ["AsyncCore", "AsyncCoreExecutorExperiment"]),
    // The executor experiment's instrument, shared by the two above; no API.
    .target(name: "AsyncCoreExecutorExperiment"),
    // Test support that more than one test target uses: the Core seed's
    // login domain, driven by a core in AsyncCoreTests and by a test core in
    // AsyncCoreTestingTests. Not a product.
    .target(
      name: "AsyncCoreTestSupport", dependencies: ["AsyncCore", "AsyncCoreTesting"], path: "Tests/AsyncCoreTestSupport"),
    // Starting the package's executables (examples, the journal's probe) as
    // child processes, and the test environment (the sanitizer a run is
    // under): for the test targets. Not a product.
    .target(name: "AsyncCoreProcessTestSupport", path: "Tests/AsyncCoreProcessTestSupport"),
    // AsyncCoreTesting for its `ManualClock`.
    .testTarget(
      name: "AsyncCoreTests",
      dependencies: ["AsyncCore", "AsyncCoreTesting", "AsyncCoreTestSupport", "AsyncCoreProcessTestSupport"]),
    .testTarget(
      name: "AsyncCoreJournalTests", dependencies: ["AsyncCoreJournal", "AsyncCore", "AsyncCoreProcessTestSupport"]),
    .testTarget(
      name: "AsyncCoreSQLiteTests",
      dependencies: [
        "AsyncCoreSQLite", "AsyncCoreJournal", "AsyncCore", "CSQLite", "AsyncCoreProcessTestSupport",
        "AsyncCoreTestSupport",
      ]),
    // The child process of the ServiceLifecycle trait's SIGTERM test: a
    // ServiceGroup with a durable core. Without the trait, a stub.
    .executableTarget(
      name: "AsyncCoreServiceProbe",
      dependencies: [
        "AsyncCore", "AsyncCoreJournal",
        .product(
          name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
        .product(name: "Logging", package: "swift-log", condition: .when(traits: ["ServiceLifecycle"])),
      ],
      path: "Tests/AsyncCoreServiceProbe"),
    // The integrations' tests: empty unless their traits are enabled.
    .testTarget(
      name: "AsyncCoreIntegrationTests",
      dependencies: [
        "AsyncCore", "AsyncCoreTesting", "AsyncCoreProcessTestSupport",
        .product(
          name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle",
          condition: .when(traits: ["ServiceLifecycle"])),
        .product(
          name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
        .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
        .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
        .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
      ]),
    // Against a PostgreSQL server (ASYNCCORE_POSTGRES_URL, scripts/postgres):
    // empty without the Postgres trait.
    .testTarget(
      name: "AsyncCorePostgresTests",
      dependencies: [
        "AsyncCorePostgres", "AsyncCore", "AsyncCoreJournal", "AsyncCoreProcessTestSupport", "AsyncCoreTestSupport",
        .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
        .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Postgres"])),
      ]),
    .testTarget(name: "AsyncCoreNavigationTests", dependencies: ["AsyncCoreNavigation", "AsyncCore"]),
    // The coordinator tests drive a route stack and deep links with TestCore.
    .testTarget(
      name: "AsyncCoreTestingTests",
      dependencies: ["AsyncCoreTesting", "AsyncCore", "AsyncCoreNavigation", "AsyncCoreTestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)

// MARK: - Examples
//
// Each example lives in Examples/<Name>/: its logic in Library/ (state,
// actions, reducer, the types a test drives) and a thin `@main` in Main/.
// `swift run <Name>` runs it; Tests/ExamplesTests tests both halves.

// What the examples share: writing to standard output (and ending quietly
// when its reader leaves), escaping what a user typed before echoing it,
// reading input lines that Ctrl-C ends; the `report FILE` command, and the
// navigation types as JSON for it.
package.targets.append(
  .target(
    name: "AsyncCoreExampleSupport", dependencies: ["AsyncCore", "AsyncCoreNavigation", "AsyncCoreJournal"],
    path: "Examples/Support"))

let examplesTests = Target.testTarget(
  name: "ExamplesTests",
  dependencies: [
    "AsyncCore", "AsyncCoreNavigation", "AsyncCoreTesting", "AsyncCoreJournal", "AsyncCoreExampleSupport",
    "AsyncCoreProcessTestSupport", "AsyncCoreTestSupport",
  ])
package.targets.append(examplesTests)

/// Adds the example in Examples/`name`/ and its executable product `name`.
///
/// Product names are what a reader types and need not be unique across a
/// package graph; target names must be (a user's own `Counter` target would
/// clash with ours), hence `AsyncCore<Name>Example` (the library the tests
/// import) and `AsyncCore<Name>ExampleMain`.
@MainActor
func addExample(_ name: String, dependencies: [Target.Dependency] = []) {
  let library = "AsyncCore\(name)Example"
  let main = "AsyncCore\(name)ExampleMain"
  package.targets += [
    .target(
      name: library, dependencies: ["AsyncCore", "AsyncCoreExampleSupport"] + dependencies,
      path: "Examples/\(name)/Library"),
    .executableTarget(
      name: main, dependencies: [.target(name: library), "AsyncCoreExampleSupport"], path: "Examples/\(name)/Main"),
  ]
  package.products.append(.executable(name: name, targets: [main]))
  examplesTests.dependencies.append(.target(name: library))
}

// Unicore's counter with a step, observed with `for await` and a subscriber.
addExample("Counter")
// A service: concurrent producers, `for await` consumers, graceful Ctrl-C;
// with `--journal PATH`, its orders on disk and its totals resumed; with
// `--customers N`, an entity per customer, passivated into a SQLite file
// with `--store PATH`.
addExample("OrderService", dependencies: ["AsyncCoreJournal", "AsyncCoreSQLite"])
// The Core seed's one-time-password login: a terminal screen, a countdown,
// a fake network, navigation; `report FILE` writes a bug report, `inspect`
// reads one.
addExample("Login", dependencies: ["AsyncCoreNavigation", "AsyncCoreJournal"])
// The ReSwift + App Coordinator seed's property search: an async API worker,
// a results list, a detail, a route stack as a breadcrumb, deep links;
// `report FILE` writes a bug report, `inspect` reads one.
addExample("PropertySearch", dependencies: ["AsyncCoreNavigation", "AsyncCoreJournal"])
// The same domain as a Display-Logic-Core scene: logic in the core, a
// presenter and a navigator subscribed to it, workers in its dependencies.
addExample(
  "PropertyScene", dependencies: ["AsyncCoreNavigation", .target(name: "AsyncCorePropertySearchExample")])
