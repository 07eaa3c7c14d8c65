import AsyncCore

/// Maps deep links such as `app://property/42` to the routes they open,
/// with declarative patterns.
///
/// ```swift
/// let links = DeepLinks<Route>(scheme: "app")
///   .rule("property/:id") { try .property(id: $0.int("id")) }
///   .rule("photos") { _ in .photos }
///   .rule("search") { try .search(query: $0.string("q")) }
///
/// try links.routes(for: "app://property/42")           // [.property(id: 42)]
/// try links.routes(for: "app://property/42/photos")    // [.property(id: 42), .photos]
/// try links.routes(for: "app://search?q=new%20york")   // [.search(query: "new york")]
/// try links.routes(for: "app://")                      // []: the root screen
/// try links.routes(for: "app://property/abc")          // throws .invalidParameter(name: "id", …)
/// ```
///
/// A link is `scheme://path?query#fragment`:
/// - **Scheme**: compared without regard to case; another scheme throws
///   ``DeepLinkError/unknownScheme(_:)``, text with no `scheme://` throws
///   ``DeepLinkError/notALink(_:)``.
/// - **Path**: the segments after `://`, the first one included (what a
///   URL calls the host: `property` in `app://property/42`). Empty segments
///   are ignored, so `app://property/42/`, `app:///property/42` and
///   `app://property//42` are `property/42`. Each segment is
///   percent-decoded after the path is split, so `%2F` stays inside its
///   segment.
/// - **Several routes**: the path is read from the left, one rule at a
///   time: the first rule, in the order declared, whose pattern matches the
///   segments that come next gives one route and consumes them, and so on
///   to the end. `app://property/42/property/7` is two detail screens, the
///   second on top. A segment no rule matches throws
///   ``DeepLinkError/noMatchingRule(path:)`` with the rest of the path.
/// - **Query**: `name=value` pairs after `?`, split on `&`, percent-decoded,
///   with `+` read as a space (as forms encode it). Every rule of the link
///   sees them (``DeepLinkParameters/value(_:)``).
/// - **Fragment**: everything after `#` is ignored.
///
/// Reading a link never traps: anything a user can type or paste gives
/// routes or a ``DeepLinkError`` saying what is wrong. Only a malformed
/// pattern, a mistake in the app's code, stops the program.
public struct DeepLinks<Route: Sendable>: Sendable {
  /// The scheme links must have, such as `app` for `app://property/42`.
  ///
  /// ```swift
  /// print(links.scheme)   // "app"
  /// ```
  public let scheme: String
  /// The rules, in the order declared: the order they are tried in.
  let rules: [DeepLinkRule<Route>]

  /// Links of `scheme` (such as `"app"`), with no rule yet: only `app://`,
  /// the root screen, is readable.
  ///
  /// ```swift
  /// let links = DeepLinks<Route>(scheme: "app")
  ///   .rule("property/:id") { try .property(id: $0.int("id")) }
  /// ```
  ///
  /// - Important: `scheme` must be a URL scheme: a letter, then letters,
  ///   digits, `+`, `-` or `.`. Anything else is a programmer error.
  public init(scheme: String) {
    guard LinkText.isScheme(scheme[...]) else {
      programmerError("DeepLinks(scheme: \(logSafe(scheme))): a scheme is a letter then letters, digits, +, - or .")
    }
    self.scheme = scheme
    self.rules = []
  }

  init(scheme: String, rules: [DeepLinkRule<Route>]) {
    self.scheme = scheme
    self.rules = rules
  }

  /// These links, with one more rule: path segments matching `pattern`
  /// give the route `route` makes from their parameters.
  ///
  /// ```swift
  /// let links = DeepLinks<Route>(scheme: "app")
  ///   .rule("property/:id") { try .property(id: $0.int("id")) }
  ///   .rule("property/:id/reviews") { try .reviews(propertyID: $0.int("id")) }   // never tried: the rule above matches first
  ///   .rule("search") { parameters in .search(query: parameters.value("q") ?? "") }
  /// ```
  ///
  /// A pattern is segments separated by `/`: a literal (`property`)
  /// matches the same text exactly, case included; `:name` matches any one
  /// segment and makes it the parameter `name`. Rules are tried in the
  /// order declared, so declare a longer pattern before a shorter one it
  /// starts with. The first rule whose pattern matches decides: an error
  /// its `route` throws (a parameter that is not a number, say) is the
  /// link's error, and no later rule is tried. A ``DeepLinkError`` is
  /// thrown as it is; any other error becomes
  /// ``DeepLinkError/rejected(path:reason:)``.
  ///
  /// `route` throws untyped errors so that a one-line closure such as
  /// `{ try .property(id: $0.int("id")) }` needs no annotation: Swift 6
  /// does not infer a closure's typed `throws` from its context.
  ///
  /// - Important: A pattern with no segment, an empty parameter name (`:`),
  ///   the same parameter twice, or a `?`, `#`, `%`, space, control or
  ///   invisible character (a pattern is written as its segments read once
  ///   decoded; a segment holding such characters is read with a
  ///   `:parameter`) is a programmer error, reported when the rule is added.
  public func rule(
    _ pattern: String,
    _ route: @escaping @Sendable (_ parameters: DeepLinkParameters) throws -> Route
  ) -> DeepLinks {
    DeepLinks(scheme: scheme, rules: rules + [DeepLinkRule(pattern: pattern, make: route)])
  }

  /// The routes `link` opens, bottom first: what to put on a
  /// ``RouteStack``.
  ///
  /// ```swift
  /// do {
  ///   state.stack.routes = try links.routes(for: url)
  /// } catch {
  ///   state.alert = "\(error)"   // error is a DeepLinkError
  /// }
  /// ```
  ///
  /// - Returns: One route per rule matched, in the order of the path; no
  ///   route for a link with an empty path (`app://`): the root screen.
  /// - Throws: A ``DeepLinkError`` saying which part of the link is wrong.
  public func routes(for link: String) throws(DeepLinkError) -> [Route] {
    let parsed = try LinkText(link)
    guard parsed.scheme.lowercased() == scheme.lowercased() else {
      throw .unknownScheme(String(parsed.scheme))
    }
    let segments = parsed.segments
    var routes: [Route] = []
    var index = segments.startIndex
    while index < segments.endIndex {
      let rest = segments[index...]
      guard let (rule, values) = firstMatch(in: rest) else {
        throw .noMatchingRule(path: rest.joined(separator: "/"))
      }
      let consumed = rest.prefix(rule.segments.count)
      do {
        routes.append(try rule.make(DeepLinkParameters(path: values, query: parsed.query)))
      } catch let error as DeepLinkError {
        throw error
      } catch {
        throw .rejected(path: consumed.joined(separator: "/"), reason: "\(error)")
      }
      index += consumed.count
    }
    return routes
  }

  /// The first rule matching the start of `segments`, with its parameters.
  private func firstMatch(in segments: ArraySlice<String>) -> (DeepLinkRule<Route>, [String: String])? {
    for rule in rules {
      if let values = rule.match(segments) { return (rule, values) }
    }
    return nil
  }
}

/// One rule of ``DeepLinks``: a pattern and the route it makes.
struct DeepLinkRule<Route: Sendable>: Sendable {
  enum Segment: Sendable, Equatable {
    case literal(String)
    case parameter(String)
  }

  let segments: [Segment]
  let make: @Sendable (DeepLinkParameters) throws -> Route

  init(pattern: String, make: @escaping @Sendable (DeepLinkParameters) throws -> Route) {
    // A literal is compared with a decoded segment, so `?`, `#`, `%`,
    // spaces and invisible characters in a pattern are mistakes; such a
    // segment can still be read with a `:parameter`.
    if let bad = pattern.unicodeScalars.first(where: Self.cannotAppearInPattern) {
      let hex = String(bad.value, radix: 16, uppercase: true)
      let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
      programmerError(
        "DeepLinks.rule(\(logSafe(pattern))): a pattern cannot contain \(code) \(logSafe(String(bad))); "
          + "write literal segments as they read once decoded, with no query, fragment, escape, space or "
          + "invisible character (read such a segment with a :parameter)")
    }
    var segments: [Segment] = []
    for piece in pattern.split(separator: "/") {
      guard piece.first == ":" else {
        segments.append(.literal(String(piece)))
        continue
      }
      let name = String(piece.dropFirst())
      guard !name.isEmpty else {
        programmerError("DeepLinks.rule(\(logSafe(pattern))): a parameter needs a name after ':'")
      }
      guard !segments.contains(.parameter(name)) else {
        programmerError("DeepLinks.rule(\(logSafe(pattern))): the parameter :\(name) appears twice")
      }
      segments.append(.parameter(name))
    }
    // A rule that consumed no segment would never move the reading on.
    guard !segments.isEmpty else {
      programmerError("DeepLinks.rule(\(logSafe(pattern))): a pattern needs at least one segment")
    }
    self.segments = segments
    self.make = make
  }

  /// Whether `scalar` can never be part of a pattern (see `init`).
  private static func cannotAppearInPattern(_ scalar: Unicode.Scalar) -> Bool {
    if scalar == "?" || scalar == "#" || scalar == "%" || scalar.properties.isWhitespace { return true }
    switch scalar.properties.generalCategory {
    case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse,
      .unassigned:
      return true
    default:
      return false
    }
  }

  /// The parameters, if this rule's pattern matches the start of `path`.
  func match(_ path: ArraySlice<String>) -> [String: String]? {
    guard path.count >= segments.count else { return nil }
    var values: [String: String] = [:]
    for (segment, text) in zip(segments, path) {
      switch segment {
      case .literal(let literal):
        guard literal == text else { return nil }
      case .parameter(let name):
        values[name] = text
      }
    }
    return values
  }
}
