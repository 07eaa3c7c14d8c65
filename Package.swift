// swift-tools-version: 6.2
import PackageDescription

let package = Package(
  name: "AsyncCore",
  // As low as `Synchronization.Mutex` and `Atomic` allow.
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "AsyncCore", targets: ["AsyncCore"]),
    .executable(name: "Benchmarks", targets: ["Benchmarks"]),
  ],
  targets: [
    .target(name: "AsyncCore"),
    .executableTarget(name: "Benchmarks", dependencies: ["AsyncCore"]),
    .testTarget(name: "AsyncCoreTests", dependencies: ["AsyncCore"]),
  ],
  swiftLanguageModes: [.v6]
)
