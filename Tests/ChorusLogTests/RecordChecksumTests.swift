import CCRC32C
import ChorusLMDBLog
import ChorusLog
import ChorusTestSupport
import Foundation
import Testing

@Suite("Record checksums")
struct RecordChecksumTests {
    @Test("a flipped byte in a stored record is found by reads and by verification")
    func corruptionIsDetected() async throws {
        try await withTemporaryDirectory { directory in
            let marker = "MARKER-\(UUID().uuidString)"
            try await withLog(directory) { log in
                _ = try await log.append(tick("s", "before"))
                _ = try await log.append(tick("s", marker))
                _ = try await log.append(tick("s", "after"))
                #expect(try log.verifyIntegrity().isSound)
            }
            let dataFile = directory + "/data.mdb"
            var bytes = try Data(contentsOf: URL(fileURLWithPath: dataFile))
            // Copy-on-write leaves older copies of the page in the file: corrupt every copy of the record.
            var searchFrom = bytes.startIndex
            var copies = 0
            while let range = bytes.range(of: Data(marker.utf8), in: searchFrom..<bytes.endIndex) {
                bytes[range.lowerBound + 3] ^= 0x20
                searchFrom = range.upperBound
                copies += 1
            }
            try #require(copies > 0)
            try bytes.write(to: URL(fileURLWithPath: dataFile))

            try await withLog(directory) { log in
                let report = try log.verifyIntegrity()
                #expect(report.firstProblem?.position == 2)
                #expect(report.firstProblem?.message.contains("checksum") == true)
                let readError = #expect(throws: EventLogError.self) { try log.read(from: 1) }
                #expect(readError?.code == .corruptRecord)
                #expect(readError?.position == 2)
                #expect(try log.read(from: 3).map(\.text) == ["after"])
            }
        }
    }

    @Test(
        "CRC-32C gives the standard check value, and the CPU's instruction the table's answer at every length and start"
    )
    func checksumAgreesWithTheTable() {
        let check = Array("123456789".utf8).withUnsafeBytes { chorus_crc32c($0.baseAddress, $0.count) }
        #expect(check == 0xE306_9283)
        #expect(chorus_crc32c(nil, 0) == 0)
        #if arch(x86_64)
        #expect(chorus_crc32c_uses_instruction() == 1)
        #endif
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<8_192).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { buffer in
            // Every start within a word, and lengths around every multiple of eight.
            for start in 0..<8 {
                for count in Array(0..<80) + [1_023, 1_024, 1_025, 8_000] {
                    let from = buffer.baseAddress! + start
                    #expect(
                        chorus_crc32c(from, count) == chorus_crc32c_portable(from, count),
                        "start \(start), count \(count)")
                }
            }
        }
    }
}
