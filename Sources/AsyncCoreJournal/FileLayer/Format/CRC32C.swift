/// CRC-32C (Castagnoli: the reflected polynomial 0x82F63B78), the checksum
/// of every journal header and record.
///
/// Castagnoli's polynomial rather than zlib's: it detects more error
/// patterns in the short messages a journal holds, and it is the one
/// iSCSI, ext4 and SQLite-style logs use. Computed by slicing-by-8: eight
/// bytes per step through eight 256-entry tables, the tail a byte at a time.
///
/// `package`: the tests check its vectors and build damaged records with it.
package enum CRC32C {
  /// The checksum of `bytes`.
  package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
    if let crc = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) {
      return crc
    }
    var crc = ~UInt32(0)
    for byte in bytes {
      crc = tables[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8)
    }
    return ~crc
  }

  /// The checksum of the bytes at `buffer`.
  package static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
    var crc = ~UInt32(0)
    tables.withUnsafeBufferPointer { table in
      var index = 0
      let count = buffer.count
      while index + 8 <= count {
        // Unaligned loads: a record's payload starts anywhere in a buffer.
        let low = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: index, as: UInt32.self)) ^ crc
        let high = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self))
        crc =
          table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
          ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
          ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
          ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
        index += 8
      }
      while index < count {
        crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ buffer[index])] ^ (crc >> 8)
        index += 1
      }
    }
    return ~crc
  }

  /// Eight tables of 256 entries, one after the other. Table 0, entry `n`:
  /// the remainder of the byte `n` shifted through the reflected polynomial
  /// eight times; table `k`, entry `n`: table `k - 1`'s entry `n` advanced
  /// by one more zero byte. Built once, on first use (a `static let`).
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for index in 0..<256 {
      var value = UInt32(index)
      for _ in 0..<8 {
        value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1
      }
      tables[index] = value
    }
    for slice in 1..<8 {
      for index in 0..<256 {
        let previous = tables[(slice - 1) * 256 + index]
        tables[slice * 256 + index] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
      }
    }
    return tables
  }()
}
