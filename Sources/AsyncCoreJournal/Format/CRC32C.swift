/// CRC-32C (Castagnoli: the reflected polynomial 0x82F63B78), the checksum
/// of every journal header and record.
///
/// Castagnoli's polynomial rather than zlib's: it detects more error
/// patterns in the short messages a journal holds, and it is the one
/// iSCSI, ext4 and SQLite-style logs use. Computed a byte at a time from a
/// 256-entry table built once (slicing-by-8 would be faster; a record is
/// checksummed once when written and once when recovered, and the write or
/// the decoding dominates both).
///
/// `package`: the tests check its vectors and build damaged records with it.
package enum CRC32C {
  /// The checksum of `bytes`.
  package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc = ~UInt32(0)
    for byte in bytes {
      crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8)
    }
    return ~crc
  }

  /// The checksum of the bytes at `buffer`.
  package static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
    var crc = ~UInt32(0)
    table.withUnsafeBufferPointer { table in
      for byte in buffer {
        crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8)
      }
    }
    return ~crc
  }

  /// Entry `n`: the remainder of the byte `n` shifted through the reflected
  /// polynomial eight times.
  private static let table: [UInt32] = (0..<256).map { index in
    var value = UInt32(index)
    for _ in 0..<8 {
      value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1
    }
    return value
  }
}
