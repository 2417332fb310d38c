import AsyncHTTPClient
import ChorusFixtures
import ChorusProcesses
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `chorus serve` running as a child process on a free port, and a small JSON client for it.
final class ServerProcess: @unchecked Sendable {
    let process: ChildProcess
    let port: Int
    let base: String
    /// The server's admin token: the environment's `CHORUS_ADMIN_TOKEN`, or one of the tests' own. `/metrics` and the
    /// positions of `/health` are for it alone.
    let adminToken: String
    /// Where the server's standard error (its log) goes: a file, which a chatty server cannot fill as it can a pipe.
    let logFile: String
    /// Whether `logFile` is this object's own, removed with it.
    private let ownsLogFile: Bool

    /// Returns once this server, and no other, answers `/health`: a port found free can be taken by another test's
    /// server before this one binds it, which then answered in its place (with tokens this one never issued). So the
    /// server's own log must say it listens on the port first; a free port found taken is traded for another.
    ///
    /// - Parameters:
    ///   - logFile: by default a file of its own in the temporary directory, removed with this object (beside `data`
    ///     it outlived the test's temporary directory when `data` was that directory).
    ///   - port: by default a free one; a restarted server takes its predecessor's.
    init(
        data: String, logFile: String? = nil, port: Int? = nil, extraArguments: [String] = [],
        environment: [String: String] = [:]
    ) async throws {
        self.logFile =
            logFile
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("chorus-serve-\(UUID().uuidString.lowercased()).log").path
        ownsLogFile = logFile == nil
        adminToken = environment["CHORUS_ADMIN_TOKEN"] ?? "the-test-servers-admin-token"
        var environment = environment
        environment["CHORUS_ADMIN_TOKEN"] = adminToken
        var attempt = 1
        while true {
            let candidate = try port ?? LoopbackPort.free()
            let process = try Self.launch(
                data: data, port: candidate, extraArguments: extraArguments, environment: environment,
                logFile: self.logFile)
            switch try await Self.awaitListening(process, port: candidate, logFile: self.logFile) {
            case .listening:
                self.process = process
                self.port = candidate
                base = "http://127.0.0.1:\(candidate)"
                return
            case .portTaken where port == nil && attempt < 5:
                attempt += 1
            case .portTaken, .exited:
                throw ServerError("chorus serve exited: \(Self.contents(of: self.logFile))")
            }
        }
    }

    private static func launch(
        data: String, port: Int, extraArguments: [String], environment: [String: String], logFile: String
    ) throws -> ChildProcess {
        // Emptied: a retry's log starts afresh, and the log says nothing of a server before it.
        try ChildProcess(
            try chorusExecutableURL().path, ["serve", "--data", data, "--port", String(port)] + extraArguments,
            environment: environment, output: .discarded, errors: .file(logFile))
    }

    private enum Start { case listening, portTaken, exited }

    private static func awaitListening(_ process: ChildProcess, port: Int, logFile: String) async throws -> Start {
        let listening = "listening on 127.0.0.1:\(port)"
        for _ in 0..<300 {
            guard process.isRunning else {
                return contents(of: logFile).contains("Address already in use") ? .portTaken : .exited
            }
            if contents(of: logFile).contains(listening),
                (try? await call(base: "http://127.0.0.1:\(port)", "GET", "/health"))?.status == 200
            {
                return .listening
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        process.terminate()
        throw ServerError("chorus serve did not answer /health within 30 s: \(contents(of: logFile))")
    }

    deinit {
        // The process, if still running, is killed as it goes.
        if ownsLogFile { try? FileManager.default.removeItem(atPath: logFile) }
    }

    struct Answer: @unchecked Sendable {
        let status: Int
        let headers: [String: String]
        let json: [String: Any]
        /// The body as text (for answers that are not JSON, such as `/metrics`).
        let text: String
        var items: [[String: Any]] { json["items"] as? [[String: Any]] ?? [] }
        var position: UInt64? { headers["chorus-position"].flatMap(UInt64.init) }
    }

    /// One request, through AsyncHTTPClient: Foundation's URLSession on Linux has been seen to stall for good, its
    /// dispatch threads spinning, after servers it talks to are killed and restarted.
    func call(
        _ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil, body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> Answer {
        try await Self.call(base: base, method, path, token: token, json: json, body: body, headers: headers)
    }

    /// Signs a new user up; throws unless the server answers 201 with the user and a token.
    func register(email: String, name: String, password: String = "secret-password") async throws
        -> (id: String, token: String)
    {
        let answer = try await call(
            "POST", "/v1/auth/register", json: ["email": email, "password": password, "name": name])
        guard answer.status == 201, let id = (answer.json["user"] as? [String: Any])?["id"] as? String,
            let token = answer.json["token"] as? String
        else { throw ServerError("signing \(email) up answered \(answer.status): \(answer.json)") }
        return (id, token)
    }

    /// Every item of a paged list at `path` (with or without a query), page after page until `nextCursor` is null;
    /// throws on a page that is not 200.
    func allItems(_ path: String, token: String?, headers: [String: String] = [:]) async throws -> [[String: Any]] {
        let first = path + (path.contains("?") ? "&" : "?") + "limit=100"
        var items: [[String: Any]] = []
        var cursor: String?
        repeat {
            let page = try await call(
                "GET", first + (cursor.map { "&cursor=\($0)" } ?? ""), token: token, headers: headers)
            guard page.status == 200 else { throw ServerError("\(path) answered \(page.status): \(page.json)") }
            items += page.items
            cursor = page.json["nextCursor"] as? String
        } while cursor != nil
        return items
    }

    private static func call(
        base: String, _ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil,
        body: Data? = nil, headers: [String: String] = [:]
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.body = .bytes(ByteBuffer(bytes: Array(try JSONSerialization.data(withJSONObject: json))))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        if let body { request.body = .bytes(ByteBuffer(bytes: Array(body))) }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        // A server that stops answering fails the test instead of hanging it. Not sooner: a debug server under the
        // whole suite's load has taken over 30 s to answer one request (a crash test's check, which passes alone).
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let data = Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView)
        var fields: [String: String] = [:]
        for (name, value) in response.headers {
            fields[name.lowercased()] = fields[name.lowercased()].map { $0 + ", " + value } ?? value
        }
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return Answer(
            status: Int(response.status.code), headers: fields, json: object,
            text: String(decoding: data, as: UTF8.self))
    }

    /// Sends SIGTERM and waits for the process to exit; returns its status.
    func stop() async -> Int32 {
        process.terminate()
        return await exited()
    }

    /// Waits for the process to exit (SIGKILLed, say); returns its status.
    func exited() async -> Int32 { await process.exited() }

    /// Sends SIGKILL: the server dies at once, as in a crash.
    func kill() { process.send(SIGKILL) }

    func standardError() -> String { Self.contents(of: logFile) }

    private static func contents(of file: String) -> String {
        (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    }
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
