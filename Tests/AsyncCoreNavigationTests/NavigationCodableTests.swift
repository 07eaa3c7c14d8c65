import AsyncCoreNavigation
import Foundation
import Testing

/// The navigation types as JSON, for a state or a recording that holds them.
@Suite("Navigation types as JSON", .hangDetector)
struct NavigationCodableTests {
  func json(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
  }

  func roundTrip<Value: Codable & Equatable>(_ value: Value) throws -> Value {
    try JSONDecoder().decode(Value.self, from: try JSONEncoder().encode(value))
  }

  @Test("a route stack is written as its routes, bottom first, and reads back equal")
  func routeStack() throws {
    let stack: RouteStack<LinkRoute> = [.property(id: 42), .photos]
    #expect(try json(stack) == #"{"routes":[{"property":{"id":42}},{"photos":{}}]}"#)
    #expect(try roundTrip(stack) == stack)
  }

  @Test("every navigation action is written as its case, and reads back equal")
  func navigationActions() throws {
    let actions: [NavigationAction<LinkRoute>] = [
      .push(.search(query: "flat")), .pop, .popToRoot, .replace(.page("a")), .set([.photos, .property(id: 1)]),
    ]
    #expect(try json(actions[1]) == #"{"pop":{}}"#)
    #expect(try json(actions[0]) == #"{"push":{"_0":{"search":{"query":"flat"}}}}"#)
    #expect(try roundTrip(actions) == actions)
  }

  @Test("every deep-link error is written as its case and values, and reads back equal")
  func deepLinkErrors() throws {
    let errors: [DeepLinkError] = [
      .notALink("x"), .unknownScheme("ftp"), .badPercentEncoding("%zz"), .noMatchingRule(path: "map"),
      .missingParameter("id"), .invalidParameter(name: "id", value: "abc", expected: "an integer"),
      .rejected(path: "p", reason: "r"),
    ]
    #expect(try json(errors[3]) == #"{"noMatchingRule":{"path":"map"}}"#)
    #expect(try roundTrip(errors) == errors)
  }
}
