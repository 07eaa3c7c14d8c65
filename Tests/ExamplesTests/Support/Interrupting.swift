import Testing

/// Runs the example `product` with its standard input open, types `input`,
/// waits until it writes the line `shown` (a request's loading line), sends
/// SIGINT as Ctrl-C would, and returns what it wrote after that, to its end.
/// Fails the test unless that ends with `bye` and the program exits with
/// status 0.
///
/// ```swift
/// let rest = try await linesAfterInterrupt(
///   "Login", arguments: ["--latency", "3600"], typing: "555 0100\n",
///   after: "  … sending a code to 555 0100", bye: "bye: not signed in")
/// ```
///
/// Every wait is on the program's output, never on time. The output is
/// read to its end before the exit status is awaited: that read is an
/// `AsyncStream`'s, which the suite's time limit cancels, so a program that
/// keeps running after Ctrl-C fails the test at the limit (and is killed)
/// rather than hanging the test process in `waitpid`.
func linesAfterInterrupt(
  _ product: String, arguments: [String], typing input: String = "", after shown: String, bye: String,
  sourceLocation: SourceLocation = #_sourceLocation
) async throws -> [String] {
  let program = try ExampleProgram.start(product, arguments: arguments, keepingInputOpen: true)
  defer { program.terminate() }
  program.type(input)
  var lines = program.output.makeAsyncIterator()
  var seen: [String] = []
  while let line = await lines.next() {
    seen.append(line)
    if line == shown { break }
  }
  try #require(
    seen.last == shown, "the program ended before it showed \(shown): \(seen)", sourceLocation: sourceLocation)
  program.interrupt()
  var rest: [String] = []
  while let line = await lines.next() { rest.append(line) }
  try #require(
    rest.last == bye, "after Ctrl-C the program wrote \(rest) and \(Task.isCancelled ? "was still running" : "ended")",
    sourceLocation: sourceLocation)
  #expect(await program.exitStatus() == .exited(0), sourceLocation: sourceLocation)
  return rest
}
