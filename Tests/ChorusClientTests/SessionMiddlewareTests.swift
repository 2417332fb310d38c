import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

@testable import ChorusClient

@Suite("Client SDK: the session of every request")
struct SessionMiddlewareTests {
    @Test("requests carry the token; reads carry the highest position seen; a refusal is a ChorusError")
    func session() async throws {
        let tokens = InMemoryTokenStore(token: "the-token")
        let middleware = SessionMiddleware(tokens: tokens, positions: PositionTracker())
        let sent = Mutex<[HTTPRequest]>([])
        func call(_ method: HTTPRequest.Method, operation: String, answering position: UInt64?, status: Int = 200)
            async throws
        {
            _ = try await middleware.intercept(
                HTTPRequest(method: method, scheme: "http", authority: "chorus.test", path: "/v1/x"), body: nil,
                baseURL: URL(string: "http://chorus.test")!, operationID: operation
            ) { request, _, _ in
                sent.withLock { $0.append(request) }
                var response = HTTPResponse(status: .init(code: status))
                if let position { response.headerFields[SessionMiddleware.position] = String(position) }
                let body = status == 200 ? nil : HTTPBody(#"{"error":{"code":"blocked","message":"no"}}"#)
                return (response, body)
            }
        }
        try await call(.get, operation: "getMe", answering: 5)
        try await call(.post, operation: "createPost", answering: 9)
        try await call(.get, operation: "homeFeed", answering: 7)
        try await call(.get, operation: "live", answering: nil)
        try await call(.get, operation: "homeFeed", answering: nil)
        let requests = sent.withLock { $0 }
        #expect(requests.allSatisfy { $0.headerFields[.authorization] == "Bearer the-token" })
        #expect(
            requests.map { $0.headerFields[SessionMiddleware.minPosition] } == [nil, nil, "9", nil, "9"],
            "reads wait for the highest position seen, a write's included; the live stream starts by its own id")

        await #expect(throws: ChorusError(status: 403, code: "blocked", message: "no")) {
            try await call(.put, operation: "follow", answering: nil, status: 403)
        }
        await tokens.setToken(nil)
        try await call(.get, operation: "getMe", answering: nil)
        #expect(sent.withLock { $0.last?.headerFields[.authorization] } == nil, "signed out: no token")
    }
}
