// Outside text in a log line or a stop message, escaped and bounded so it
// cannot add lines, hide characters or flood. `package`: `DeepLinkError` uses it.

/// `text` for a log line: in quotes (unless `quoted` is false), with
/// control, format and separator characters escaped as `\u{…}`, and cut
/// once the text written reaches `limit` UTF-8 bytes, saying how many bytes
/// of the input were left out.
///
/// The cut counts what is written after escaping, by Unicode scalar, so no
/// input makes the result longer than `limit` plus the note.
package func logSafe(_ text: String, quoted: Bool = true, limit: Int = 200) -> String {
  var result = ""
  var written = 0
  var index = text.unicodeScalars.startIndex
  while index != text.unicodeScalars.endIndex {
    let scalar = text.unicodeScalars[index]
    let piece: String
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
      piece = "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
    default:
      piece = quoted && (scalar == "\"" || scalar == "\\") ? "\\" + String(scalar) : String(scalar)
    }
    guard written + piece.utf8.count <= limit else {
      // What is left of the input, in UTF-8 bytes (O(1) for native strings).
      let left = text.utf8.distance(from: index, to: text.utf8.endIndex)
      result += "… (\(left) more bytes)"
      break
    }
    result += piece
    written += piece.utf8.count
    text.unicodeScalars.formIndex(after: &index)
  }
  return quoted ? "\"\(result)\"" : result
}
