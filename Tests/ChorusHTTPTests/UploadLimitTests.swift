import ChorusBackend
import ChorusHTTP
import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: upload limits over a socket")
struct UploadLimitTests {
    @Test("a declared 1 GiB upload is refused before its body is read; a chunked one at the first bytes past 10 MiB")
    func largeUploads() async throws {
        try await withAPI(.live) { api in
            let ana = try await api.register("Ana")
            let port = try #require(api.client.port)
            let token = ana.token
            let declared = try await BlockingWork.run {
                try RawUpload.send(
                    port: port,
                    head: "POST /v1/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                        + "Content-Type: image/png\r\nContent-Length: 1073741824\r\n\r\n",
                    chunks: 1, chunkSize: 65_536, chunked: false)
            }
            #expect(declared.status == 413, "answered after \(declared.sentBytes) bytes")
            let streamed = try await BlockingWork.run {
                try RawUpload.send(
                    port: port,
                    head: "POST /v1/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                        + "Content-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n",
                    chunks: 64, chunkSize: 1 << 20, chunked: true)
            }
            #expect(streamed.status == 413)
            #expect(streamed.sentBytes < 40 << 20, "refused well before the 64 MiB the client would send")
            #expect(try FileManager.default.contentsOfDirectory(atPath: api.backend.data.media).isEmpty)
        }
    }
}

/// Sends an upload's head and then body chunks until the server answers; returns its status and what was sent.
enum RawUpload {
    struct Outcome: Sendable {
        let status: Int
        let sentBytes: Int
    }

    static func send(port: Int, head: String, chunks: Int, chunkSize: Int, chunked: Bool) throws -> Outcome {
        let descriptor = try connectToLoopback(port: port)
        defer { close(descriptor) }
        func write(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                == bytes.count
        }
        _ = write(Array(head.utf8))
        var sent = 0
        var body = [UInt8](repeating: 0, count: chunkSize)
        body.replaceSubrange(0..<8, with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        for _ in 0..<chunks {
            // Stop once the server has answered.
            var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&probe, 1, 0) > 0 { break }
            let framed = chunked ? Array(String(chunkSize, radix: 16).utf8) + [13, 10] + body + [13, 10] : body
            guard write(framed) else { break }
            sent += chunkSize
        }
        var answer = [UInt8](repeating: 0, count: 4_096)
        let count = receive(descriptor, into: &answer)
        guard count > 0 else { throw StreamError("no answer after \(sent) bytes") }
        let line = String(decoding: answer[..<count], as: UTF8.self).split(separator: " ")
        return Outcome(status: Int(line.dropFirst().first ?? "") ?? 0, sentBytes: sent)
    }
}
