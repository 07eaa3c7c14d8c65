// The navigation types as JSON (for bug reports), as synthesis would write it:
//
//     RouteStack       {"routes":[{"results":{"place":"Leeds"}}]}
//     NavigationAction {"pop":{}}, {"push":{"_0":{"property":{"id":42}}}}
//     DeepLinkError    {"noMatchingRule":{"path":"map"}}
//
// Each goes through a private twin whose conformance is synthesized (Swift
// synthesizes `Codable` only in the file that declares the type).

extension RouteStack: Codable where Route: Codable {
  private enum CodingKeys: String, CodingKey {
    case routes
  }

  /// Writes the stack as its routes, bottom first.
  ///
  /// ```swift
  /// let json = try JSONEncoder().encode(RouteStack<PropertyRoute>([.property(id: 42)]))
  /// // {"routes":[{"property":{"id":42}}]}
  /// ```
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(routes, forKey: .routes)
  }

  /// Reads a stack written by ``encode(to:)``.
  ///
  /// ```swift
  /// let stack = try JSONDecoder().decode(RouteStack<PropertyRoute>.self, from: json)
  /// ```
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(try container.decode([Route].self, forKey: .routes))
  }
}

extension NavigationAction: Codable where Route: Codable {
  /// Writes the action as its case: `{"pop":{}}`, `{"push":{"_0":…}}`.
  ///
  /// ```swift
  /// let json = try JSONEncoder().encode(NavigationAction<PropertyRoute>.pop)   // {"pop":{}}
  /// ```
  public func encode(to encoder: any Encoder) throws {
    try CodedNavigationAction(self).encode(to: encoder)
  }

  /// Reads an action written by ``encode(to:)``.
  ///
  /// ```swift
  /// let action = try JSONDecoder().decode(NavigationAction<PropertyRoute>.self, from: json)
  /// ```
  public init(from decoder: any Decoder) throws {
    self = try CodedNavigationAction<Route>(from: decoder).action
  }
}

private enum CodedNavigationAction<Route: Hashable & Sendable & Codable>: Codable {
  case push(Route)
  case pop
  case popToRoot
  case replace(Route)
  case set([Route])

  init(_ action: NavigationAction<Route>) {
    switch action {
    case .push(let route): self = .push(route)
    case .pop: self = .pop
    case .popToRoot: self = .popToRoot
    case .replace(let route): self = .replace(route)
    case .set(let routes): self = .set(routes)
    }
  }

  var action: NavigationAction<Route> {
    switch self {
    case .push(let route): .push(route)
    case .pop: .pop
    case .popToRoot: .popToRoot
    case .replace(let route): .replace(route)
    case .set(let routes): .set(routes)
    }
  }
}

extension DeepLinkError: Codable {
  /// Writes the error as its case and values:
  /// `{"invalidParameter":{"name":"id","value":"abc","expected":"an integer"}}`.
  ///
  /// ```swift
  /// let json = try JSONEncoder().encode(DeepLinkError.noMatchingRule(path: "map"))
  /// ```
  public func encode(to encoder: any Encoder) throws {
    try CodedDeepLinkError(self).encode(to: encoder)
  }

  /// Reads an error written by ``encode(to:)``.
  ///
  /// ```swift
  /// let error = try JSONDecoder().decode(DeepLinkError.self, from: json)
  /// ```
  public init(from decoder: any Decoder) throws {
    self = try CodedDeepLinkError(from: decoder).error
  }
}

private enum CodedDeepLinkError: Codable {
  case notALink(String)
  case unknownScheme(String)
  case badPercentEncoding(String)
  case noMatchingRule(path: String)
  case missingParameter(String)
  case invalidParameter(name: String, value: String, expected: String)
  case rejected(path: String, reason: String)

  init(_ error: DeepLinkError) {
    switch error {
    case .notALink(let text): self = .notALink(text)
    case .unknownScheme(let scheme): self = .unknownScheme(scheme)
    case .badPercentEncoding(let part): self = .badPercentEncoding(part)
    case .noMatchingRule(let path): self = .noMatchingRule(path: path)
    case .missingParameter(let name): self = .missingParameter(name)
    case .invalidParameter(let name, let value, let expected):
      self = .invalidParameter(name: name, value: value, expected: expected)
    case .rejected(let path, let reason): self = .rejected(path: path, reason: reason)
    }
  }

  var error: DeepLinkError {
    switch self {
    case .notALink(let text): .notALink(text)
    case .unknownScheme(let scheme): .unknownScheme(scheme)
    case .badPercentEncoding(let part): .badPercentEncoding(part)
    case .noMatchingRule(let path): .noMatchingRule(path: path)
    case .missingParameter(let name): .missingParameter(name)
    case .invalidParameter(let name, let value, let expected):
      .invalidParameter(name: name, value: value, expected: expected)
    case .rejected(let path, let reason): .rejected(path: path, reason: reason)
    }
  }
}
