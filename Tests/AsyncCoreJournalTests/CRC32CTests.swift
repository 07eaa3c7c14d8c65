import AsyncCoreJournal
import Testing

@Suite("CRC-32C")
struct CRC32CTests {
  static let standardVectors: [([UInt8], UInt32)] = [
    ([], 0),
    (Array("123456789".utf8), 0xE306_9283),
    ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
  ]

  @Test("the checksum of the standard test vectors", arguments: standardVectors)
  func vectors(bytes: [UInt8], checksum: UInt32) {
    #expect(CRC32C.checksum(bytes) == checksum)
    #expect(bytes.withUnsafeBytes { CRC32C.checksum($0) } == checksum)
  }

  /// The definition, a byte at a time, bit by bit: what the fast path must equal.
  static func reference(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc = ~UInt32(0)
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
    }
    return ~crc
  }

  @Test("random buffers of every length 0…300, at every start 0…7, checksum as the byte-at-a-time definition")
  func randomBuffersMatchTheReference() {
    var generator = SplitMix(seed: 0x0C5C_32C0)
    let bytes = (0..<(300 + 8)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    for start in 0..<8 {
      for length in 0...300 {
        let slice = bytes[start..<start + length]
        let expected = Self.reference(slice)
        #expect(
          bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<start + length])) }
            == expected, "start \(start), length \(length)")
        #expect(CRC32C.checksum(slice) == expected, "slice: start \(start), length \(length)")
        #expect(CRC32C.checksum(AnySequence(slice)) == expected, "sequence: start \(start), length \(length)")
      }
    }
  }
}

/// A small deterministic generator, so a failure names a buffer that can be made again.
private struct SplitMix: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var value = state
    value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
    value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
    return value ^ (value >> 31)
  }
}
