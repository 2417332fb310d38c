import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A small JSON client for a Chorus server: the bench's driver and the operator commands' `--server`.
struct HTTPJSONClient: Sendable {
    /// `http://host:port`, without a trailing slash.
    let base: String

    init(base: String) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// An answer: its status, its JSON object (empty if it is none) and its header fields, names lowercased.
    struct Answer: @unchecked Sendable {
        let status: Int
        let body: [String: Any]
        let headers: [String: String]
    }

    /// Sends `json` (if any) as the body; returns the status and the answer's JSON object (empty if it is none).
    @discardableResult
    func call(_ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil) async throws
        -> (status: Int, body: [String: Any])
    {
        let answer = try await exchange(method, path, token: token, json: json)
        return (answer.status, answer.body)
    }

    /// The body of `GET path` as text (`/metrics`), with `token` as the bearer token if given.
    func text(_ path: String, token: String? = nil) async throws -> String {
        String(decoding: try await bytes(path, token: token).body, as: UTF8.self)
    }

    /// The body of `GET path` as it came, and its `Content-Type`.
    func bytes(_ path: String, token: String? = nil) async throws -> (body: Data, type: String?) {
        guard let url = URL(string: base + path) else { throw OperatorError("\(base + path) is not a URL") }
        var request = URLRequest(url: url)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type"))
    }

    /// Uploads `bytes` of `type` (`POST /v1/media`); returns the status and the answer's JSON object.
    func upload(_ bytes: Data, type: String, token: String) async throws -> (status: Int, body: [String: Any]) {
        guard let url = URL(string: base + "/v1/media") else { throw OperatorError("\(base) is not a URL") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue(type, forHTTPHeaderField: "Content-Type")
        let (data, response) = try await URLSession.shared.upload(for: request, from: bytes)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, object)
    }

    /// Sends `json` (if any) as the body and `headers` besides; returns the whole answer. Through AsyncHTTPClient:
    /// Foundation's URLSession on Linux has been seen to stall for good under many requests at once.
    func exchange(
        _ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil,
        headers: [String: String] = [:]
    ) async throws -> Answer {
        guard URL(string: base + path) != nil else { throw OperatorError("\(base + path) is not a URL") }
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let data = Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        var fields: [String: String] = [:]
        for field in response.headers { fields[field.name.lowercased()] = field.value }
        return Answer(status: Int(response.status.code), body: object, headers: fields)
    }
}
