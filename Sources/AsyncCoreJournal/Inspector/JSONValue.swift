/// Any JSON document, decoded without knowing its Swift type: how the
/// inspector reads a recording whose `State` and `Action` it does not have
/// (`asynccore-inspect list report.json`), and writes it back on one line.
///
/// Integers stay integers (`Int64`), other numbers are `Double`; objects
/// encode with their keys sorted (the encoder's `sortedKeys`).
package enum JSONValue: Codable, Sendable, Equatable {
  case null
  case bool(Bool)
  case integer(Int64)
  case number(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  package init(from decoder: any Decoder) throws {
    if var array = try? decoder.unkeyedContainer() {
      var elements: [JSONValue] = []
      while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
      self = .array(elements)
      return
    }
    if let object = try? decoder.container(keyedBy: AnyKey.self) {
      var members: [String: JSONValue] = [:]
      for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
      self = .object(members)
      return
    }
    let value = try decoder.singleValueContainer()
    if value.decodeNil() {
      self = .null
    } else if let bool = try? value.decode(Bool.self) {
      self = .bool(bool)
    } else if let integer = try? value.decode(Int64.self) {
      self = .integer(integer)
    } else if let number = try? value.decode(Double.self) {
      self = .number(number)
    } else {
      self = .string(try value.decode(String.self))
    }
  }

  package func encode(to encoder: any Encoder) throws {
    switch self {
    case .null:
      var value = encoder.singleValueContainer()
      try value.encodeNil()
    case .bool(let bool):
      var value = encoder.singleValueContainer()
      try value.encode(bool)
    case .integer(let integer):
      var value = encoder.singleValueContainer()
      try value.encode(integer)
    case .number(let number):
      var value = encoder.singleValueContainer()
      try value.encode(number)
    case .string(let string):
      var value = encoder.singleValueContainer()
      try value.encode(string)
    case .array(let elements):
      var array = encoder.unkeyedContainer()
      for element in elements { try array.encode(element) }
    case .object(let members):
      var object = encoder.container(keyedBy: AnyKey.self)
      for (key, member) in members { try object.encode(member, forKey: AnyKey(key)) }
    }
  }

  /// A coding key of any name.
  private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }
}
