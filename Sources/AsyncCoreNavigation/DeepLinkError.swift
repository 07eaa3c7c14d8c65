import AsyncCore

/// Why ``DeepLinks/routes(for:)`` could not read a link: which part is
/// wrong, for the caller to show, log or count.
///
/// ```swift
/// do {
///   state.stack.routes = try links.routes(for: link)
/// } catch .unknownScheme(let scheme) {
///   state.alert = "Links starting with \(scheme):// open in the browser."
/// } catch {
///   state.alert = "This link cannot be opened: \(error)"
/// }
/// ```
public enum DeepLinkError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The text is not `scheme://…`: empty, with no `://`, or with a scheme
  /// that is not a letter then letters, digits, `+`, `-` or `.`.
  ///
  /// ```swift
  /// try links.routes(for: "property/42")   // throws .notALink("property/42")
  /// ```
  case notALink(String)
  /// The link's scheme, as written, is not the one the links were made for.
  ///
  /// ```swift
  /// try links.routes(for: "https://property/42")   // throws .unknownScheme("https")
  /// ```
  case unknownScheme(String)
  /// A part of the link, as written, has a `%` not followed by two
  /// hexadecimal digits, or escapes that do not spell UTF-8 text.
  ///
  /// ```swift
  /// try links.routes(for: "app://search?q=100%")   // throws .badPercentEncoding("100%")
  /// ```
  case badPercentEncoding(String)
  /// No rule matches the path from this point on: the rest of the path,
  /// decoded, its segments joined with `/`.
  ///
  /// ```swift
  /// try links.routes(for: "app://property/42/map")   // throws .noMatchingRule(path: "map")
  /// ```
  case noMatchingRule(path: String)
  /// A rule needs a parameter the link does not have, or has empty.
  ///
  /// ```swift
  /// try links.routes(for: "app://search")   // throws .missingParameter("q")
  /// ```
  case missingParameter(String)
  /// A parameter's value is not what the rule needs: its name, its value,
  /// and what was expected (`"an integer"`). Rules may throw it for their
  /// own checks too.
  ///
  /// ```swift
  /// try links.routes(for: "app://property/abc")
  /// // throws .invalidParameter(name: "id", value: "abc", expected: "an integer")
  /// ```
  case invalidParameter(name: String, value: String, expected: String)
  /// A rule threw an error of its own type: the segments it matched,
  /// joined with `/`, and the error's description.
  ///
  /// ```swift
  /// .rule("listing/:code") { try .listing(Listing.Code(parsing: $0.string("code"))) }
  /// try links.routes(for: "app://listing/zz")
  /// // throws .rejected(path: "listing/zz", reason: "BadCode()")
  /// ```
  case rejected(path: String, reason: String)

  /// The error in a sentence, for a log.
  ///
  /// ```swift
  /// print(DeepLinkError.noMatchingRule(path: "map"))   // no rule matches the path "map"
  /// ```
  ///
  /// The parts that come from the link are quoted as they were read, with
  /// control and invisible characters escaped (`\u{A}`) and each part cut
  /// after 200 bytes of text: a link someone typed or forged cannot add
  /// lines to a log, or flood it. A description stays under 1 KB however
  /// the link was built.
  public var description: String {
    switch self {
    case .notALink(let text): "\(logSafe(text)) is not a link (scheme://path)"
    case .unknownScheme(let scheme): "the scheme \(logSafe(scheme)) is not this app's"
    case .badPercentEncoding(let part): "\(logSafe(part)) has a malformed percent escape"
    case .noMatchingRule(let path): "no rule matches the path \(logSafe(path))"
    case .missingParameter(let name): "the parameter \(logSafe(name)) is missing or empty"
    case .invalidParameter(let name, let value, let expected):
      "the parameter \(logSafe(name)) is \(logSafe(value)), not \(logSafe(expected, quoted: false))"
    case .rejected(let path, let reason):
      "the rule for \(logSafe(path)) rejected it: \(logSafe(reason, quoted: false))"
    }
  }
}
