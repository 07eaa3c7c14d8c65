// Text that comes from outside the program (a link, an action's payload, an
// error's description) and goes into a log line or a stop message: escaped
// and bounded, so it cannot add lines to a log, hide characters in it, or
// flood it. Shared by every message that quotes such text.
//
// `package`, not internal: AsyncCoreNavigation's `DeepLinkError` quotes the
// links it could not read with it. Not public: it is no API of AsyncCore.

/// `text` for a log line: in quotes (unless `quoted` is false), with
/// control, format and separator characters escaped as `\u{…}`, and cut
/// once the text written reaches `limit` UTF-8 bytes, saying how many bytes
/// of the input were left out.
///
/// The cut counts what is written, after escaping, one Unicode scalar at a
/// time: neither a grapheme cluster of 100,000 combining marks (one
/// `Character`) nor 100,000 invisible characters (each escaped to eight)
/// can make the result longer than `limit` plus the note.
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
