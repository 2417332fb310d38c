import AsyncHTTPClient
import ChorusCluster
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `chorus serve` running as a child process on a free port, and a small JSON client for it.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let base: String
    /// Where the server's standard error (its log) goes: a file, which a chatty server cannot fill as it can a pipe.
    let logFile: String
    /// Whether `logFile` is this object's own, removed with it.
    private let ownsLogFile: Bool

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
        guard FileManager.default.createFile(atPath: self.logFile, contents: nil),
            let errors = FileHandle(forWritingAtPath: self.logFile)
        else { throw ServerError("could not create \(self.logFile)") }
        self.port = try port ?? Self.freePort()
        base = "http://127.0.0.1:\(self.port)"
        process.executableURL = try chorusExecutableURL()
        process.arguments = ["serve", "--data", data, "--port", String(self.port)] + extraArguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        for _ in 0..<300 {
            if (try? await call("GET", "/health"))?.status == 200 { return }
            guard process.isStillRunning else { throw ServerError("chorus serve exited: \(standardError())") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ServerError("chorus serve did not answer /health within 30 s")
    }

    deinit {
        if process.isRunning { process.terminate() }
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
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.body = .bytes(ByteBuffer(bytes: Array(try JSONSerialization.data(withJSONObject: json))))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        if let body { request.body = .bytes(ByteBuffer(bytes: Array(body))) }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        // A server that stops answering fails the test instead of hanging it.
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
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

    /// Waits for the process to exit (SIGKILLed, say); returns its status (-1 if Foundation reaped it without telling).
    /// Polls: Foundation's notice of an exit is sometimes lost (see `Process.childState`).
    func exited() async -> Int32 {
        var reapedPolls = 0
        while true {
            switch process.childState {
            case .exited(let status): return status
            case .reaped:
                reapedPolls += 1
                if reapedPolls > 50 { return -1 }
            case .running: break
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    func standardError() -> String {
        (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
    }

    /// A port nothing listens on now: the kernel's pick for a socket bound to port 0.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw ServerError("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
