#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Settings a test reads from the environment, to scale or replay it from
/// the command line (`ASYNCCORE_STRESS_SCALE=0.25 swift test …`), and the
/// sanitizer it runs under. Shared by the test targets.
package enum Environment {
  /// The variable's value, or `nil` if it is unset or empty.
  package static func string(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let string = String(cString: value)
    return string.isEmpty ? nil : string
  }
}

extension Environment {
  /// The sanitizer this test process runs under, found by its runtime's
  /// entry point (`swift test --sanitize=thread` links it into the test
  /// binary): `"thread"`, `"address"` or `nil`. Lets a heavy test scale
  /// itself down where every memory access costs several times more.
  package static let sanitizer: String? = {
    guard let program = dlopen(nil, RTLD_NOW) else { return nil }
    defer { dlclose(program) }
    if dlsym(program, "__tsan_init") != nil { return "thread" }
    if dlsym(program, "__asan_init") != nil { return "address" }
    return nil
  }()
}
