import ArgumentParser
import Foundation

/// `--server URL`: work on a running server through its admin routes, with the admin token from
/// `CHORUS_ADMIN_TOKEN` (a flag would show in the process list).
struct ServerOption: ParsableArguments {
    @Option(help: "A running server's URL, such as http://127.0.0.1:8080 (admin token from CHORUS_ADMIN_TOKEN).")
    var server: String?

    /// The admin client, or nil without `--server`.
    func adminClient() throws -> AdminClient? {
        guard let server else { return nil }
        guard let token = ProcessInfo.processInfo.environment["CHORUS_ADMIN_TOKEN"], !token.isEmpty else {
            throw OperatorError("set CHORUS_ADMIN_TOKEN to the server's admin token to use --server")
        }
        return AdminClient(http: HTTPJSONClient(base: server), token: token)
    }
}

/// The admin routes of a running server.
struct AdminClient {
    let http: HTTPJSONClient
    let token: String

    /// `GET /v1/admin/projections`: each projection's status object.
    func projections() async throws -> [[String: Any]] {
        let body = try await call("GET", "/v1/admin/projections", expecting: 200)
        return body["projections"] as? [[String: Any]] ?? []
    }

    /// `POST /v1/admin/projections/rebuild`.
    func startRebuild() async throws {
        try await call("POST", "/v1/admin/projections/rebuild", expecting: 202)
    }

    @discardableResult
    private func call(_ method: String, _ path: String, expecting status: Int) async throws -> [String: Any] {
        let answer: (status: Int, body: [String: Any])
        do {
            answer = try await http.call(method, path, token: token)
        } catch {
            throw OperatorError("cannot reach \(http.base): \(error.localizedDescription)")
        }
        switch answer.status {
        case status: return answer.body
        case 401, 403:
            throw OperatorError("\(http.base) refused the admin token (\(answer.status)); check CHORUS_ADMIN_TOKEN")
        default:
            let message = (answer.body["error"] as? [String: Any])?["message"] as? String ?? "no message"
            throw OperatorError("\(method) \(path) answered \(answer.status): \(message)")
        }
    }
}
