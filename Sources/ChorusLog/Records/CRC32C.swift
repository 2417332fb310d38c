/// CRC-32C (Castagnoli), the checksum of every log record; slice-by-8 tables keep it near a byte per cycle.
enum CRC32C {
    private static let polynomial: UInt32 = 0x82F6_3B78

    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 0 ? 0 : polynomial) }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            for slice in 1..<8 {
                let previous = tables[slice - 1][byte]
                tables[slice][byte] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        var offset = 0
        tables.withUnsafeBufferPointer { tables in
            let t0 = tables[0]
            let t1 = tables[1]
            let t2 = tables[2]
            let t3 = tables[3]
            let t4 = tables[4]
            let t5 = tables[5]
            let t6 = tables[6]
            let t7 = tables[7]
            while offset + 8 <= count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                let low = UInt32(truncatingIfNeeded: word) ^ crc
                let high = UInt32(truncatingIfNeeded: word >> 32)
                crc =
                    t7[Int(low & 0xFF)] ^ t6[Int((low >> 8) & 0xFF)] ^ t5[Int((low >> 16) & 0xFF)]
                    ^ t4[Int(low >> 24)] ^ t3[Int(high & 0xFF)] ^ t2[Int((high >> 8) & 0xFF)]
                    ^ t1[Int((high >> 16) & 0xFF)] ^ t0[Int(high >> 24)]
                offset += 8
            }
            while offset < count {
                crc = (crc >> 8) ^ t0[Int((crc ^ UInt32(base.load(fromByteOffset: offset, as: UInt8.self))) & 0xFF)]
                offset += 1
            }
        }
        return ~crc
    }
}
