import CCRC32C

/// CRC-32C (Castagnoli), the checksum of every log record: the CPU's CRC32 instruction where it has one (`CCRC32C`).
package enum CRC32C {
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return 0 }
        return chorus_crc32c(base, bytes.count)
    }
}
