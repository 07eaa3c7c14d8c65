import AsyncCoreJournal
import Testing

/// A tiny binary codec written by hand: it stores `UInt64`s as 8 bytes,
/// little-endian, and refuses anything else.
struct UInt64Codec: JournalCodec {
  struct Unsupported: Error, Equatable { var type: String }

  func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    guard let number = value as? UInt64 else { throw Unsupported(type: String(reflecting: T.self)) }
    return (0..<8).map { UInt8(truncatingIfNeeded: number >> (8 * $0)) }
  }

  func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    guard T.self == UInt64.self, bytes.count == 8,
      let value = bytes.reversed().reduce(UInt64(0), { $0 << 8 | UInt64($1) }) as? T
    else { throw Unsupported(type: String(reflecting: T.self)) }
    return value
  }
}

enum OrderAction: Codable, Equatable, Sendable {
  case placed(id: Int, items: [String])
  case cancelled(id: Int)
}

@Suite("Journal codecs")
struct JournalCodecTests {
  @Test("actions encoded with the JSON codec come back from the journal equal")
  func json() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let codec: any JournalCodec = JSONJournalCodec()
    let actions: [OrderAction] = [.placed(id: 1, items: ["tea", "cake"]), .cancelled(id: 1)]
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try journal.append(try actions.map { try codec.encode($0) })
    journal.close()
    let (_, recovered) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(try recovered.records.map { try codec.decode(OrderAction.self, from: $0.body) } == actions)
    #expect(try String(decoding: recovered.allRecords()[1].body, as: UTF8.self) == #"{"cancelled":{"id":1}}"#)
  }

  @Test("one JSON codec shared by 8 tasks gives each the same bytes, keys sorted, and decodes them back")
  func sharedJSONCodec() async throws {
    struct Order: Codable, Equatable, Sendable {
      var zone: String
      var amount: Int
      var id: Int
    }
    let codec = JSONJournalCodec()
    let order = Order(zone: "north", amount: 12, id: 7)
    let results = try await withThrowingTaskGroup(of: ([UInt8], Order).self) { group in
      for _ in 0..<8 {
        group.addTask {
          var last: ([UInt8], Order)?
          // A few rounds each: enough for the tasks to overlap. Under
          // ThreadSanitizer a shared JSONEncoder costs milliseconds a call
          // (200 rounds held both pool threads for 37 s in CI).
          for _ in 0..<5 {
            let bytes = try codec.encode(order)
            last = (bytes, try codec.decode(Order.self, from: bytes))
          }
          return try #require(last)
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(results.count == 8)
    for (bytes, decoded) in results {
      #expect(String(decoding: bytes, as: UTF8.self) == #"{"amount":12,"id":7,"zone":"north"}"#)
      #expect(decoded == order)
    }
  }

  @Test("a binary codec a user writes plugs in: 8 bytes a record, read back equal")
  func binary() throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let codec: any JournalCodec = UInt64Codec()
    let values: [UInt64] = [0, 1, 0xDEAD_BEEF, .max]
    let (journal, _) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    try journal.append(try values.map { try codec.encode($0) })
    journal.close()
    let (_, recovered) = try Journal.open(directory: scratch.journal, identity: testIdentity, durability: .everyAction)
    #expect(try recovered.allRecords().map(\.body.count) == [8, 8, 8, 8])
    #expect(try recovered.records.map { try codec.decode(UInt64.self, from: $0.body) } == values)
    #expect(throws: UInt64Codec.Unsupported(type: "Swift.String")) { try codec.encode("text") }
  }
}
