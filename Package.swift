// swift-tools-version: 6.2
import PackageDescription

let package = Package(
  name: "AsyncCore",
  // As low as `Synchronization.Mutex` and `Atomic` allow.
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "AsyncCore", targets: ["AsyncCore"]),
    // Imports Testing: apps link only AsyncCore, their tests this too.
    .library(name: "AsyncCoreTesting", targets: ["AsyncCoreTesting"]),
    .executable(name: "AsyncCoreBenchmarks", targets: ["AsyncCoreBenchmarks"]),
    .executable(name: "AsyncCoreProfile", targets: ["AsyncCoreProfile"]),
  ],
  targets: [
    .target(name: "AsyncCore"),
    .target(name: "AsyncCoreTesting", dependencies: ["AsyncCore"]),
    // A name no user's package is likely to have: target names are unique
    // across a package graph. The folder keeps its short name.
    .executableTarget(name: "AsyncCoreBenchmarks", dependencies: ["AsyncCore"], path: "Sources/Benchmarks"),
    // A synchronous main for valgrind (see Sources/Profile/main.swift).
    .executableTarget(name: "AsyncCoreProfile", dependencies: ["AsyncCore"], path: "Sources/Profile"),
    .testTarget(name: "AsyncCoreTests", dependencies: ["AsyncCore"]),
    .testTarget(name: "AsyncCoreTestingTests", dependencies: ["AsyncCoreTesting", "AsyncCore"]),
  ],
  swiftLanguageModes: [.v6]
)
