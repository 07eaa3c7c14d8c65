/// A link taken apart: its scheme as written, its path segments and its
/// query pairs, decoded. Plain string reading, no Foundation: `URL` and
/// `URLComponents` differ between platforms in what they accept.
struct LinkText {
  let scheme: Substring
  let segments: [String]
  let query: [(name: String, value: String)]

  init(_ link: String) throws(DeepLinkError) {
    guard let colon = link.firstIndex(of: ":"), link[colon...].hasPrefix("://"),
      Self.isScheme(link[..<colon])
    else { throw .notALink(link) }
    scheme = link[..<colon]
    var rest = link[link.index(colon, offsetBy: 3)...]
    if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
    var queryText: Substring = ""
    if let mark = rest.firstIndex(of: "?") {
      queryText = rest[rest.index(after: mark)...]
      rest = rest[..<mark]
    }
    var segments: [String] = []
    for piece in rest.split(separator: "/") {
      segments.append(try Self.decode(piece, plusIsSpace: false))
    }
    var query: [(name: String, value: String)] = []
    for pair in queryText.split(separator: "&") {
      let equals = pair.firstIndex(of: "=")
      let name = try Self.decode(pair[..<(equals ?? pair.endIndex)], plusIsSpace: true)
      let value = try equals.map { (equals) throws(DeepLinkError) in
        try Self.decode(pair[pair.index(after: equals)...], plusIsSpace: true)
      }
      query.append((name, value ?? ""))
    }
    self.segments = segments
    self.query = query
  }

  /// Whether `text` is a URL scheme (RFC 3986): a letter, then letters,
  /// digits, `+`, `-` or `.`.
  static func isScheme(_ text: Substring) -> Bool {
    guard let first = text.unicodeScalars.first, first.isASCIILetter else { return false }
    return text.unicodeScalars.allSatisfy {
      $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)
    }
  }

  /// `text` with each `%XX` replaced by the byte it stands for (and, in a
  /// query, each `+` by a space), read as UTF-8.
  static func decode(_ text: Substring, plusIsSpace: Bool) throws(DeepLinkError) -> String {
    let utf8 = text.utf8
    guard utf8.contains(UInt8(ascii: "%")) || (plusIsSpace && utf8.contains(UInt8(ascii: "+"))) else {
      return String(text)
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(utf8.count)
    var index = utf8.startIndex
    while index != utf8.endIndex {
      let byte = utf8[index]
      utf8.formIndex(after: &index)
      switch byte {
      case UInt8(ascii: "%"):
        guard index != utf8.endIndex, let high = hexValue(utf8[index]) else { throw .badPercentEncoding(String(text)) }
        utf8.formIndex(after: &index)
        guard index != utf8.endIndex, let low = hexValue(utf8[index]) else { throw .badPercentEncoding(String(text)) }
        utf8.formIndex(after: &index)
        bytes.append(high << 4 | low)
      case UInt8(ascii: "+") where plusIsSpace:
        bytes.append(UInt8(ascii: " "))
      default:
        bytes.append(byte)
      }
    }
    guard let decoded = String(validating: bytes, as: UTF8.self) else { throw .badPercentEncoding(String(text)) }
    return decoded
  }

  /// The value of a hexadecimal digit, either case.
  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}

extension Unicode.Scalar {
  fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
