/// Stops the program with `message` in every build configuration.
///
/// `precondition` keeps its check in `-O` builds but drops its message (the
/// process dies with SIGILL and no text), and services run release builds;
/// `fatalError` keeps the message. Every programmer error AsyncCore detects
/// goes through here, so each says what went wrong wherever it happens.
///
/// `package`, not internal: the other modules of this package
/// (AsyncCoreNavigation's deep-link patterns) report their programmer
/// errors the same way. Not public: it is no API of AsyncCore.
@usableFromInline
package func programmerError(
  _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line
) -> Never {
  fatalError("AsyncCore: " + message(), file: file, line: line)
}
