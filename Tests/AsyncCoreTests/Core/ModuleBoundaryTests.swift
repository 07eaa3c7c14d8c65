import AsyncCore
import Testing

/// What the AsyncCore module holds, and what it leaves to the other
/// products: a service that imports AsyncCore alone compiles no router.
@Suite("AsyncCore's module boundary", .hangDetector)
struct ModuleBoundaryTests {
  /// The mangled name of `module.name` (a struct `V`, enum `O` or class
  /// `C`), bound to `Int` for each of its `genericParameters`: what the
  /// runtime looks a type up by.
  static func mangled(_ module: String, _ name: String, kind: Character, genericParameters: Int = 0) -> String {
    let context = "\(module.utf8.count)\(module)\(name.utf8.count)\(name)\(kind)"
    guard genericParameters > 0 else { return context }
    return context + "y" + String(repeating: "Si", count: genericParameters) + "G"
  }

  @Test("the runtime finds AsyncCore's own types by name: the lookup below can see the module")
  func ownTypesAreFound() {
    // Swift's runtime lookup by mangled name (what `_typeByName` exposes)
    // sees every type of every module linked into the test binary.
    #expect(_typeByName(Self.mangled("AsyncCore", "CoreError", kind: "O")) == CoreError.self)
    #expect(
      _typeByName(Self.mangled("AsyncCore", "ActionCase", kind: "V", genericParameters: 2))
        == ActionCase<Int, Int>.self)
  }

  @Test(
    "AsyncCore declares no navigation type: RouteStack, NavigationAction and DeepLinks are AsyncCoreNavigation's",
    arguments: [
      ("RouteStack", "V", 1), ("NavigationAction", "O", 1), ("DeepLinks", "V", 1),
      ("DeepLinkParameters", "V", 0), ("DeepLinkError", "O", 0), ("LinkText", "V", 0),
    ] as [(String, Character, Int)])
  func noNavigationTypes(name: String, kind: Character, genericParameters: Int) {
    let name = Self.mangled("AsyncCore", name, kind: kind, genericParameters: genericParameters)
    #expect(_typeByName(name) == nil, "\(name) is a type of AsyncCore")
  }

  @Test(
    "the core's diagnostics are one enum, CoreDiagnostic: AsyncCore declares no type per diagnostic",
    arguments: ["ChildNotFound", "DuplicateID", "RefusedSend"])
  func oneDiagnosticsType(name: String) {
    #expect(_typeByName(Self.mangled("AsyncCore", "CoreDiagnostic", kind: "O")) == CoreDiagnostic.self)
    let mangled = Self.mangled("AsyncCore", name, kind: "V")
    #expect(_typeByName(mangled) == nil, "\(name) is a type of AsyncCore")
  }
}
