import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

@Suite("API: operations")
struct OperationsAPITests {
    @Test("/metrics counts requests by route pattern and status, and shows commits, projection position and lag")
    func metrics() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            _ = try await api.post(ana, "hi")
            _ = try await api.call(.get, "/v1/users/\(ana.id)", token: ana.token)
            _ = try await api.call(.get, "/v1/nothing")
            let answer = try await api.call(.get, "/metrics", token: APIFixture.adminToken)
            #expect(answer.status == .ok && answer.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = String(decoding: answer.bytes, as: UTF8.self)
            for expected in [
                #"chorus_http_requests_total{route="/v1/users/{id}",method="GET",status="200"} 1"#,
                #"chorus_http_requests_total{route="/v1/posts",method="POST",status="201"} 1"#,
                #"status="404""#,
                "chorus_http_request_duration_seconds_bucket", "chorus_log_commits_total",
                "chorus_log_commit_appends_bucket", "chorus_projection_position", "chorus_projection_lag",
                "chorus_live_streams 0",
            ] {
                #expect(text.contains(expected), "\(expected)")
            }
            #expect(!text.contains(ana.id), "raw paths never become labels")
        }
    }

    @Test("admin routes open to the admin token only: a user's token is 403, none or another 401")
    func admin() async throws {
        var options = APIFixture.options
        options.server.adminToken = "admin-secret"
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            let status = try await api.call(.get, "/v1/admin/projections", token: "admin-secret")
            #expect(status.status == .ok)
            let projection = try #require((status.object["projections"] as? [[String: Any]])?.first)
            #expect(projection["head"] as? Int == Int(api.head.rawValue) && projection["lag"] is Int)
            #expect(try await api.call(.get, "/v1/admin/projections", token: ana.token).status == .forbidden)
            #expect(try await api.call(.get, "/v1/admin/projections", token: "admin-secreT").status == .unauthorized)
            #expect(try await api.call(.get, "/v1/admin/projections").status == .unauthorized)
        }
        try await withAPI { api in
            let answer = try await api.call(.get, "/v1/admin/projections", token: "")
            #expect(answer.status == .unauthorized, "without a configured token nothing opens them")
        }
    }
}
