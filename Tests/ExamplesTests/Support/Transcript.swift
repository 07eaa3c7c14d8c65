import Testing

/// What a session wrote, as lines: the pieces joined, split at each `\n`.
///
/// ```swift
/// let written = transcript(await collector.finish())
/// ```
func transcript(_ pieces: [String]) -> [String] {
  pieces.joined().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
}

/// The lines a session wrote after echoing command `index` (0 for the
/// first), up to the next echo (`> …`), without the farewell and blank
/// lines: what the command answered.
///
/// ```swift
/// #expect(reply(to: 1, in: written) == ["  ! There is no 9 in the list: type 1 to 3."])
/// ```
func reply(to index: Int, in transcript: [String]) -> [String] {
  let echoes = transcript.indices.filter { transcript[$0].hasPrefix("> ") }
  guard echoes.indices.contains(index) else { return ["(no command \(index) in the transcript)"] }
  let end = echoes.indices.contains(index + 1) ? echoes[index + 1] : transcript.count
  return transcript[(echoes[index] + 1)..<end].filter { !$0.hasPrefix("bye: ") && !$0.isEmpty }
}

/// Expects `lines`, a program's output read from a pipe, to be safe to show
/// on a terminal: no control or invisible character (no escape that would
/// clear the screen or move the cursor, no bidirectional override), and no
/// line longer than `longest` Unicode scalars, whatever was typed.
///
/// ```swift
/// expectSafeToShow(await program.allLines())
/// ```
func expectSafeToShow(_ lines: [String], longest: Int = 300, sourceLocation: SourceLocation = #_sourceLocation) {
  for line in lines {
    let hidden = line.unicodeScalars.filter { scalar in
      switch scalar.properties.generalCategory {
      case .control, .format, .lineSeparator, .paragraphSeparator: true
      default: false
      }
    }
    #expect(
      hidden.isEmpty,
      "hidden characters \(hidden.map { "U+\(String($0.value, radix: 16))" }) in \(line.debugDescription.prefix(200))",
      sourceLocation: sourceLocation)
    #expect(
      line.unicodeScalars.count <= longest,
      "a line of \(line.unicodeScalars.count) scalars: \(line.debugDescription.prefix(200))…",
      sourceLocation: sourceLocation)
  }
}
