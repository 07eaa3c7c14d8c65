/// Stops the program with `message` in every build configuration.
///
/// `precondition` drops its message in `-O` builds; `fatalError` keeps it.
/// `package`: AsyncCoreNavigation reports its programmer errors the same way.
@usableFromInline
package func programmerError(
  _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line
) -> Never {
  fatalError("AsyncCore: " + message(), file: file, line: line)
}
