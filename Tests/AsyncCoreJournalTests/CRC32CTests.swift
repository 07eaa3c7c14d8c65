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
}
