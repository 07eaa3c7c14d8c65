/// What a ``DeepLinks`` rule reads to make its route: the `:name` segments
/// its pattern matched, then the link's query.
///
/// ```swift
/// .rule("property/:id") { parameters in
///   .property(id: try parameters.int("id"), tab: parameters.value("tab"))   // app://property/42?tab=map
/// }
/// ```
///
/// A name is looked up among the pattern's parameters first, then among the
/// query's names (the first pair with that name, if the query repeats it).
public struct DeepLinkParameters: Sendable {
  /// The values of the pattern's `:name` segments, percent-decoded.
  let path: [String: String]
  /// The query's pairs, in order, percent-decoded.
  let query: [(name: String, value: String)]

  /// The parameter `name`, or `nil` if the link has none; possibly empty
  /// for a query pair with no value (`?q=` or `?q`).
  ///
  /// ```swift
  /// .rule("search") { parameters in .search(query: parameters.value("q") ?? "") }
  /// ```
  public func value(_ name: String) -> String? {
    path[name] ?? query.first { $0.name == name }?.value
  }

  /// The parameter `name`, which must be there and not empty.
  ///
  /// ```swift
  /// .rule("search") { try .search(query: $0.string("q")) }   // app://search?q=london
  /// ```
  ///
  /// - Throws: ``DeepLinkError/missingParameter(_:)`` if the link has no
  ///   such parameter or its value is empty.
  public func string(_ name: String) throws(DeepLinkError) -> String {
    guard let value = value(name), !value.isEmpty else { throw .missingParameter(name) }
    return value
  }

  /// The parameter `name` as an `Int`: decimal digits, with an optional
  /// `-` or `+` in front, within `Int`'s range.
  ///
  /// ```swift
  /// .rule("property/:id") { try .property(id: $0.int("id")) }   // app://property/42
  /// ```
  ///
  /// - Throws: ``DeepLinkError/missingParameter(_:)`` if the link has no
  ///   such parameter or its value is empty;
  ///   ``DeepLinkError/invalidParameter(name:value:expected:)`` if it is not
  ///   such a number (`abc`, `4.2`, ` 42`, `99999999999999999999`).
  public func int(_ name: String) throws(DeepLinkError) -> Int {
    let text = try string(name)
    guard let number = Int(text) else {
      throw .invalidParameter(name: name, value: text, expected: "an integer")
    }
    return number
  }
}
