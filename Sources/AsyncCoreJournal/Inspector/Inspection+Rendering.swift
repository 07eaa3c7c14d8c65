import AsyncCore

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// How the inspector shows actions and states: one line, a case name, pretty
// JSON, TestCore's differences.
extension Inspection {
  func same(_ left: State, _ right: State) -> Bool {
    let json = JSONJournalCodec()
    guard let leftBytes = try? json.encode(left), let rightBytes = try? json.encode(right) else {
      return ValueRendering.value(left) == ValueRendering.value(right)
    }
    return leftBytes == rightBytes
  }

  func differences(_ before: State, _ after: State) -> [String] {
    ValueRendering.differences(before: before, after: after).map { difference in
      "\(difference.path.isEmpty ? "state" : difference.path): \(difference.before), \(difference.after)"
    }
  }

  func pretty(_ state: State) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    guard let data = try? encoder.encode(state) else { return ValueRendering.value(state) }
    return String(decoding: data, as: UTF8.self)
  }

  func jsonName(of action: Action) -> String? {
    (try? JSONJournalCodec().encode(action)).flatMap(Self.jsonName)
  }

  func jsonLine(of action: Action) -> String {
    (try? JSONJournalCodec().encode(action)).map(Self.bodyLine) ?? Self.line(action)
  }

  /// `time - start` (nanoseconds) as seconds to the nearest millisecond: `12.345s`.
  static func seconds(_ time: Int64, since start: Int64) -> String {
    let (nanoseconds, overflow) = time.subtractingReportingOverflow(start)
    guard !overflow else { return "?" }
    let milliseconds = (nanoseconds.magnitude + 500_000) / 1_000_000
    let fraction = String(milliseconds % 1_000)
    let sign = nanoseconds < 0 && milliseconds > 0 ? "-" : ""
    return sign + "\(milliseconds / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + "s"
  }

  static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }

  /// An action's case name: the label of an enum case with a payload, the
  /// case itself without one.
  static func caseName(_ action: Action) -> String {
    let mirror = Mirror(reflecting: action)
    if mirror.displayStyle == .enum, let label = mirror.children.first?.label { return label }
    return logSafe("\(action)", quoted: false, limit: lineLimit)
  }

  /// An action on one line, in a test core's notation.
  static func line(_ action: Action) -> String {
    logSafe(ValueRendering.value(action), quoted: false, limit: lineLimit)
  }

  static func oneLine(_ error: any Error) -> String {
    logSafe("\(error)", quoted: false, limit: 300)
  }

  /// A stored body on one line: text when it is UTF-8 with no control
  /// characters but whitespace (the JSON codec's output), hex otherwise.
  static func bodyLine(_ body: [UInt8]) -> String {
    if let text = String(validating: body, as: UTF8.self),
      text.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" || $0 == "\t" || $0 == "\r" })
    {
      return logSafe(text, quoted: false, limit: lineLimit)
    }
    let digits = Array("0123456789abcdef".utf8)
    var hex: [UInt8] = Array("hex ".utf8)
    for byte in body.prefix(lineLimit / 2) {
      hex.append(digits[Int(byte >> 4)])
      hex.append(digits[Int(byte & 0xf)])
    }
    let more = body.count > lineLimit / 2 ? "… (\(body.count - lineLimit / 2) more bytes)" : ""
    return String(decoding: hex, as: UTF8.self) + more
  }

  /// The action's name in a JSON body: the first key of an object
  /// (`{"add":{"_0":1}}` is `add`, as Swift's synthesized `Codable` writes
  /// an enum case), or the string itself (a `String`-backed enum).
  static func jsonName(_ body: [UInt8]) -> String? {
    var index = body.startIndex
    func skipSpace() {
      while index < body.endIndex, [0x20, 0x09, 0x0a, 0x0d].contains(body[index]) { index += 1 }
    }
    func string() -> String? {
      guard index < body.endIndex, body[index] == UInt8(ascii: "\"") else { return nil }
      index += 1
      let start = index
      while index < body.endIndex, body[index] != UInt8(ascii: "\"") {
        index += body[index] == UInt8(ascii: "\\") ? 2 : 1
      }
      guard index < body.endIndex else { return nil }
      return String(validating: body[start..<index], as: UTF8.self)
    }
    skipSpace()
    guard index < body.endIndex else { return nil }
    if body[index] == UInt8(ascii: "{") {
      index += 1
      skipSpace()
    }
    return string()
  }
}

/// The newest `capacity` elements appended, and how many older ones went.
struct Ring<Element> {
  private var storage: [Element] = []
  private var start = 0
  let capacity: Int
  private(set) var dropped = 0

  init(capacity: Int) { self.capacity = capacity }

  mutating func append(_ element: Element) {
    if storage.count < capacity {
      storage.append(element)
    } else {
      storage[start] = element
      start = (start + 1) % capacity
      dropped += 1
    }
  }

  var elements: [Element] { Array(storage[start...] + storage[..<start]) }
}
