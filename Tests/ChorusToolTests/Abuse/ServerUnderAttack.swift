import ChorusProcesses
import ChorusTestSupport
import Foundation

/// The authorization and abuse suite (every file of this folder) attacks `chorus serve` as an attacker meets it: a
/// process on loopback, on a fresh data directory, with its defaults (every limit on) unless a test names others.
/// Each test plays one finding of the attacks tried on Chorus, and the variants an attacker would try next.
func withServerUnderAttack(
    _ arguments: [String] = [], environment: [String: String] = [:], _ body: (ServerProcess) async throws -> Void
) async throws {
    try await withTemporaryDirectory { root in
        let server = try await ServerProcess(data: root + "/data", extraArguments: arguments, environment: environment)
        do {
            try await body(server)
        } catch {
            _ = await server.stop()
            throw error
        }
        _ = await server.stop()
    }
}

extension ServerProcess {
    /// Signs up a user named `name` with an e-mail of its own.
    func user(_ name: String) async throws -> (id: String, token: String, email: String) {
        let email = "\(name.lowercased().filter(\.isLetter))-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let (id, token) = try await register(email: email, name: name)
        return (id, token, email)
    }

    /// The log's head, as `/health` tells the admin.
    func head() async throws -> Int {
        let health = try await call("GET", "/health", token: adminToken)
        guard let position = health.json["position"] as? Int else { throw ServerError("no head in \(health.json)") }
        return position
    }

    /// Opens a live stream of `topics` as `token`'s session, and reads its opening comment; throws unless it is open.
    func openStream(_ topics: String, token: String, headers: [String: String] = [:]) async throws -> RawHTTPStream {
        let (port, headers) = (port, headers.merging(["Authorization": "Bearer \(token)"]) { $1 })
        return try await BlockingWork.run {
            let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=\(topics)", headers: headers)
            guard stream.status == 200, try stream.nextBlock() == ": open" else {
                throw StreamError("the stream of \(topics) answered \(stream.status)")
            }
            return stream
        }
    }

    /// The status `GET /v1/live?query` answers `token`, read from the head alone: a stream answered where a refusal
    /// was due never ends, and a client waiting for the whole answer would wait for good.
    func liveStatus(_ query: String, token: String, headers: [String: String] = [:]) async throws -> Int {
        let (port, headers) = (port, headers.merging(["Authorization": "Bearer \(token)"]) { $1 })
        return try await BlockingWork.run {
            try RawHTTPStream(port: port, path: "/v1/live?\(query)", headers: headers).status
        }
    }

    /// Sends `request` as it is over a new connection, and answers what comes back until the server closes the
    /// connection (or 5 s pass).
    func rawExchange(_ request: [UInt8]) async throws -> String {
        let port = port
        return try await BlockingWork.run {
            let socket = try connectToLoopback(port: port)
            defer { close(socket) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
            var answer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = receive(socket, into: &chunk)
                guard count > 0 else { break }
                answer += chunk[..<count]
            }
            return String(decoding: answer, as: UTF8.self)
        }
    }
}

extension RawHTTPStream {
    /// The next block but heartbeats (a stream held long on a loaded machine has some waiting), read off the calling
    /// task's thread; throws when nothing else came within 35 s, more than two heartbeats apart.
    func next() async throws -> String {
        try await BlockingWork.run {
            let deadline = ContinuousClock.now + .seconds(35)
            var block = try self.nextBlock()
            while block == ": heartbeat" {
                guard ContinuousClock.now < deadline else { throw StreamError("nothing but heartbeats came") }
                block = try self.nextBlock()
            }
            return block
        }
    }
}
