import Foundation
import Synchronization

/// Times messages from the moment the sender sends them to the moment they arrive on the recipient's live stream
/// (`GET /v1/live?topics=conversation:<sender>`), one message at a time. The stream may be on another server than the
/// one the messages are sent to: another node of a cluster.
struct LiveDeliveryProbe {
    let server: BenchServer
    let sender: (user: String, token: String)
    let recipient: (user: String, token: String)
    var streamServer: BenchServer?

    init(
        server: BenchServer, sender: (user: String, token: String), recipient: (user: String, token: String),
        streamingFrom streamServer: BenchServer? = nil
    ) {
        self.server = server
        self.sender = sender
        self.recipient = recipient
        self.streamServer = streamServer
    }

    struct Figures {
        var p50: Double
        var p99: Double
    }

    func measure(messages: Int) async throws -> Figures {
        let port = Int((streamServer ?? server).base.split(separator: ":").last ?? "") ?? 0
        let stream = try EventStreamReader(
            port: port, path: "/v1/live?topics=conversation:\(sender.user)", token: recipient.token)
        try await stream.waitUntilOpen()
        var latencies = Latencies()
        let clock = ContinuousClock()
        for index in 0..<messages {
            let sent = clock.now
            let marker = "probe-\(index)-end"
            let (status, _) = try await server.request(
                "POST", "/v1/messages", token: sender.token, json: ["to": recipient.user, "text": marker])
            guard status == 201 else { throw BenchmarkError("sending a message answered \(status)") }
            guard let arrived = await stream.arrival(of: marker, timeout: .seconds(10)) else {
                throw BenchmarkError("message \(index) never arrived on the live stream")
            }
            latencies.add(arrived - sent)
        }
        stream.close()
        return Figures(p50: latencies.percentile(0.5), p99: latencies.percentile(0.99))
    }
}

/// Reads a live stream on a thread of its own and notes when each marker first appears in it.
final class EventStreamReader: Sendable {
    /// When each marker arrived, and whether the stream's opening comment has.
    private final class Arrivals: Sendable {
        let times = Mutex<[String: ContinuousClock.Instant]>([:])
        let isOpen = Atomic<Bool>(false)
    }

    private let descriptor: Int32
    private let arrivals = Arrivals()

    init(port: Int, path: String, token: String) throws {
        let descriptor = try Self.open(port: port, path: path, token: token)
        self.descriptor = descriptor
        let arrivals = self.arrivals
        Thread {
            var pending = ""
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                let now = ContinuousClock.now
                pending += String(decoding: buffer[..<count], as: UTF8.self)
                if !arrivals.isOpen.load(ordering: .relaxed), pending.contains(": open") {
                    arrivals.isOpen.store(true, ordering: .releasing)
                }
                // Markers look like probe-<n>-end; note each one whole, keep what may be the start of the next.
                while let start = pending.range(of: "probe-"),
                    let end = pending.range(of: "-end", range: start.upperBound..<pending.endIndex)
                {
                    let marker = String(pending[start.lowerBound..<end.upperBound])
                    arrivals.times.withLock { if $0[marker] == nil { $0[marker] = now } }
                    pending = String(pending[end.upperBound...])
                }
                if pending.count > 4_096 { pending = String(pending.suffix(64)) }
            }
        }.start()
    }

    /// Returns once the server has opened the stream (its first comment arrived). A stream starts at the position
    /// the server has reached when it opens it: a message sent before then may come before the stream does, and was
    /// then never delivered on it (seen once in `bench api`, its first message lost).
    func waitUntilOpen(timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !arrivals.isOpen.load(ordering: .acquiring) {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("the live stream did not open within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// When `marker` arrived, waiting for it up to `timeout`.
    func arrival(of marker: String, timeout: Duration) async -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let arrived = arrivals.times.withLock({ $0[marker] }) { return arrived }
            try? await Task.sleep(for: .microseconds(200))
        }
        return nil
    }

    func close() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    /// A socket connected to the server on `port` of this machine that has asked for the live stream at `path` as the
    /// holder of `token`; what it reads is the answer.
    static func open(port: Int, path: String, token: String) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw BenchmarkError("could not connect to the live stream")
        }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n"
        _ = request.utf8CString.withUnsafeBufferPointer { send(descriptor, $0.baseAddress, $0.count - 1, 0) }
        return descriptor
    }
}
