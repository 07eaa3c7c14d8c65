/// How much of a piece of text the examples echo.
///
/// ```swift
/// let shown = line.escapedForTerminal(limit: EchoLimit.message)
/// ```
public enum EchoLimit {
  /// What one piece of input shows at most, in Unicode scalars: a place, a
  /// phone number, a command, an option's value.
  public static let input = 80
  /// What a message quoting input shows at most, in Unicode scalars: an
  /// error drawn on a screen. Its quoted input is bounded by ``input``
  /// already; this bounds what the example did not write itself (a
  /// `DeepLinkError`'s text).
  public static let message = 240
}

extension StringProtocol {
  /// The text as it is safe to echo on a terminal: control and invisible
  /// characters written as escapes, and at most `limit` Unicode scalars,
  /// then `…`.
  ///
  /// ```swift
  /// "Leeds\u{1B}[2J".escapedForTerminal()           // Leeds\u{1B}[2J, as 14 visible characters
  /// String(repeating: "x", count: 200_000).escapedForTerminal().count  // 81: 80, then …
  /// ```
  ///
  /// Escaped are the C0 and C1 controls and DEL (a terminal obeys them: ESC
  /// begins a command, CR and BS move the cursor), format characters (the
  /// bidirectional overrides that reorder what follows, zero-width spaces,
  /// the byte-order mark), line and paragraph separators, unassigned code
  /// points, and every other default-ignorable one (a terminal draws
  /// nothing for it). They become `\n`, `\r`, `\t`, or `\u{1B}` with the
  /// code point in hex. A zero-width joiner and a variation selector are
  /// kept inside an emoji, where they join what is drawn (👨‍👩‍👧, ❤️).
  ///
  /// A backslash is kept as it is, so escaping is idempotent: text escaped
  /// once (a message quoting input) can be escaped again where it is drawn,
  /// and reads the same. The bound counts Unicode scalars, not characters,
  /// so one character carrying 200,000 combining marks is bounded too; an
  /// escape is never cut in half.
  ///
  /// - Parameter limit: The most Unicode scalars the result has before `…`.
  public func escapedForTerminal(limit: Int = EchoLimit.input) -> String {
    var result = String.UnicodeScalarView()
    for character in self {
      for piece in EscapedPiece.pieces(of: character) {
        switch piece {
        case .shown(let scalar):
          guard result.count < limit else { return String(result) + "…" }
          result.append(scalar)
        case .escaped(let escape):
          // An escape is shown whole or not at all.
          guard result.count + escape.count <= limit else { return String(result) + "…" }
          result.append(contentsOf: escape)
        }
      }
    }
    return String(result)
  }
}

/// A scalar of a text as it is shown on a terminal.
private enum EscapedPiece {
  case shown(Unicode.Scalar)
  case escaped(String.UnicodeScalarView)

  /// The scalars of `character`, each shown or escaped.
  static func pieces(of character: Character) -> [EscapedPiece] {
    let scalars = character.unicodeScalars
    guard let first = scalars.first else { return [] }
    return scalars.enumerated().map { index, scalar in
      let joinsEmoji = index > 0 && first.properties.isEmoji && isEmojiJoiner(scalar)
      return joinsEmoji || !isHidden(scalar) ? .shown(scalar) : .escaped(escape(scalar).unicodeScalars)
    }
  }

  private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate: true
    default: scalar.properties.isDefaultIgnorableCodePoint
    }
  }

  /// The zero-width joiner and the variation selectors that pick text or
  /// emoji presentation.
  private static func isEmojiJoiner(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "\u{200D}" || scalar == "\u{FE0E}" || scalar == "\u{FE0F}"
  }

  private static func escape(_ scalar: Unicode.Scalar) -> String {
    switch scalar {
    case "\n": "\\n"
    case "\r": "\\r"
    case "\t": "\\t"
    default: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
    }
  }
}
