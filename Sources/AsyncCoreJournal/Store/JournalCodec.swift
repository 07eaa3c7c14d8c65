#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Encodes actions and states to the bytes a journal stores, and back.
///
/// ```swift
/// let codec: any JournalCodec = JSONJournalCodec()
/// let bytes = try codec.encode(OrderAction.placed(id: 7))
/// let action = try codec.decode(OrderAction.self, from: bytes)
/// ```
///
/// Plug a binary codec by conforming a type of your own; its errors are
/// passed through as they are.
public protocol JournalCodec: Sendable {
  /// The bytes of `value`.
  ///
  /// ```swift
  /// let bytes = try codec.encode(OrderAction.placed(id: 7))
  /// ```
  func encode<T: Encodable>(_ value: T) throws -> [UInt8]
  /// The value of type `type` in `bytes`.
  ///
  /// ```swift
  /// let action = try codec.decode(OrderAction.self, from: record.body)
  /// ```
  func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T
}

/// The default codec: JSON, with Foundation's encoder and decoder (on
/// Linux from FoundationEssentials, the part without the rest of
/// Foundation).
///
/// ```swift
/// let codec = JSONJournalCodec()
/// try journal.append([try codec.encode(OrderAction.placed(id: 7))])
/// ```
///
/// Keys are sorted, so equal values encode to equal bytes.
public struct JSONJournalCodec: JournalCodec {
  // One encoder and one decoder for every call, made once: making them per
  // call cost more than encoding a small action. Both are `Sendable`: each
  // call encodes or decodes with state of its own, and they are never
  // configured after `init`.
  private let encoder: JSONEncoder
  private let decoder = JSONDecoder()

  /// A JSON codec.
  ///
  /// ```swift
  /// let codec = JSONJournalCodec()
  /// ```
  public init() {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    self.encoder = encoder
  }

  /// The JSON of `value`, its keys sorted.
  ///
  /// ```swift
  /// let bytes = try JSONJournalCodec().encode(OrderAction.placed(id: 7))
  /// ```
  public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    Array(try encoder.encode(value))
  }

  /// The value of type `type` decoded from the JSON in `bytes`.
  ///
  /// ```swift
  /// let action = try JSONJournalCodec().decode(OrderAction.self, from: record.body)
  /// ```
  public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    try decoder.decode(type, from: Data(bytes))
  }
}
