/// Where the service writes: standard output in the program, an array in
/// tests.
///
/// ```swift
/// let console = Console(isTerminal: false) { text in print(text, terminator: "") }
/// ```
public struct Console: Sendable {
  /// Whether the summary line is redrawn in place (`\r`), or written as a
  /// new line each time (a pipe, a file, a test).
  public var isTerminal: Bool
  /// Writes `text` as it is; lines end with `\n`.
  public var write: @Sendable (String) -> Void

  public init(isTerminal: Bool, write: @escaping @Sendable (String) -> Void) {
    self.isTerminal = isTerminal
    self.write = write
  }
}
