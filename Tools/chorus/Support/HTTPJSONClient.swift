import Foundation

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

    /// Sends `json` (if any) as the body; returns the status and the answer's JSON object (empty if it is none).
    @discardableResult
    func call(_ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil) async throws
        -> (status: Int, body: [String: Any])
    {
        guard let url = URL(string: base + path) else { throw OperatorError("\(base + path) is not a URL") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, object)
    }
}
