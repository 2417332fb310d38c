import ChorusBackend
import ChorusHTTP
import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Slow and silent clients")
struct SlowClientTests {
    /// Reads until the server closes the connection; true if it did within `seconds`.
    static func closedByServer(_ descriptor: Int32, within seconds: Int) -> Bool {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = receive(descriptor, into: &buffer)
            if count == 0 { return true }  // closed
            if count < 0 { return errno == ECONNRESET }  // timed out: still open
        }
    }

    @Test(
        "a body that never finishes, and a head that never finishes, are cut off; the server answers others meanwhile")
    func cutOff() async throws {
        var options = APIFixture.options
        options.server.requestTimeout = .seconds(1)
        options.server.idleTimeout = .seconds(2)
        try await withAPI(.live, options: options) { api in
            let port = try #require(api.client.port)
            let ana = try await api.registerThroughBackend("Ana")
            let head = api.head

            // A post whose body stops a third of the way, and a request whose head stops mid-line.
            let slowBody = try connectToLoopback(port: port)
            defer { close(slowBody) }
            let request =
                "POST /v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ana.token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 30\r\n\r\n{\"text\":"
            _ = request.withCString { send(slowBody, $0, strlen($0), 0) }
            let slowHead = try connectToLoopback(port: port)
            defer { close(slowHead) }
            _ = "GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthori".withCString { send(slowHead, $0, strlen($0), 0) }

            // Others are answered while both wait (on new connections: the test client's own may be closed as idle
            // on a busy machine). A session of its own: the shared one pools connections by host and port, and a
            // port this test's server got may have been another finished test's before.
            var me = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/me")!)
            me.setValue("Bearer \(ana.token)", forHTTPHeaderField: "Authorization")
            let session = URLSession(configuration: .ephemeral)
            defer { session.invalidateAndCancel() }
            let (answer, meResponse) = try await session.data(for: me)
            let status = (meResponse as? HTTPURLResponse)?.statusCode
            #expect(
                status == 200, "\(status.map(String.init) ?? "no status"): \(String(decoding: answer, as: UTF8.self))")

            let bodyClosed = try await BlockingWork.run { Self.closedByServer(slowBody, within: 8) }
            let headClosed = try await BlockingWork.run { Self.closedByServer(slowHead, within: 8) }
            #expect(bodyClosed, "the unfinished body's connection is closed")
            #expect(headClosed, "the unfinished head's connection is closed")
            #expect(api.head == head, "nothing was appended")
            // Afterwards, on a new connection (the test client's own was closed as idle meanwhile).
            var post = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/posts")!)
            post.httpMethod = "POST"
            post.setValue("Bearer \(ana.token)", forHTTPHeaderField: "Authorization")
            post.setValue("application/json", forHTTPHeaderField: "Content-Type")
            post.httpBody = Data(#"{"text":"still writing"}"#.utf8)
            let (_, response) = try await URLSession.shared.data(for: post)
            #expect((response as? HTTPURLResponse)?.statusCode == 201)
        }
    }

    @Test("a body trickled a byte at a time, each within the idle timeout, is cut off at the request deadline")
    func trickle() async throws {
        var options = APIFixture.options
        options.server.requestTimeout = .seconds(2)
        options.server.idleTimeout = .seconds(1)
        try await withAPI(.live, options: options) { api in
            let port = try #require(api.client.port)
            let ana = try await api.registerThroughBackend("Ana")
            let head = api.head
            let descriptor = try connectToLoopback(port: port)
            defer { close(descriptor) }
            let request =
                "POST /v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ana.token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"text\":\""
            _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
            let started = ContinuousClock.now
            // One byte every 300 ms until the server closes the connection, for at most 8 s.
            let closedAfter: Duration? = try await BlockingWork.run {
                var byte: UInt8 = UInt8(ascii: "a")
                var probe = [UInt8](repeating: 0, count: 256)
                while ContinuousClock.now - started < .seconds(8) {
                    if send(descriptor, &byte, 1, Int32(MSG_NOSIGNAL)) < 0 { return ContinuousClock.now - started }
                    usleep(300_000)
                    if recv(descriptor, &probe, probe.count, Int32(MSG_DONTWAIT)) == 0 {
                        return ContinuousClock.now - started
                    }
                }
                return nil
            }
            let after = try #require(closedAfter, "the trickling connection was never closed")
            #expect(after >= .seconds(1.5) && after < .seconds(5), "closed after \(after)")
            #expect(api.head == head, "nothing was appended")
        }
    }

    @Test("a live stream is never cut off as idle, though its client sends nothing")
    func liveStreamsStay() async throws {
        var options = APIFixture.options
        options.server.idleTimeout = .seconds(1)
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let port = try #require(api.client.port)
            let ana = try await api.registerThroughBackend("Ana")
            let stream = try await BlockingWork.run {
                try RawHTTPStream(
                    port: port, path: "/v1/live?topics=notifications", headers: ["Authorization": "Bearer \(ana.token)"]
                )
            }
            // Its heartbeats keep coming well past the idle timeout: a stream cut off would fail the read.
            let opened = ContinuousClock.now
            let late = try await BlockingWork.run {
                var count = 0
                while ContinuousClock.now - opened < .seconds(2.5) {
                    // Counted once the idle timeout is well past: how many came matters less than that they came.
                    if try stream.nextBlock().contains("heartbeat"), ContinuousClock.now - opened > .seconds(1.5) {
                        count += 1
                    }
                }
                return count
            }
            #expect(late >= 1, "\(late) heartbeats after the idle timeout")
        }
    }
}
