import ChorusBackend
import ChorusHTTP
import ChorusLMDBLog
import ChorusLog
import HTTPTypes
import Testing

@Suite("API: bad input")
struct ErrorAPITests {
    @Test(
        "malformed JSON, wrong types, oversize bodies, wrong content types: a 4xx in the contract's shape, nothing appended"
    )
    func badBodies() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let head = api.head
            let cases: [([UInt8], [String: String], HTTPResponse.Status, String)] = [
                (Array("{not json".utf8), ["Content-Type": "application/json"], .badRequest, "bad_request"),
                (Array("[1,2]".utf8), ["Content-Type": "application/json"], .badRequest, "bad_request"),
                (Array(#"{"text": 5}"#.utf8), ["Content-Type": "application/json"], .badRequest, "bad_request"),
                (Array(#"{"text": ["a"]}"#.utf8), [:], .badRequest, "bad_request"),
                ([], ["Content-Type": "application/json"], .badRequest, "bad_request"),
                (
                    Array(#"{"text": "hi"}"#.utf8), ["Content-Type": "text/plain"], .unsupportedMediaType,
                    "unsupported_media_type"
                ),
                (
                    Array((#"{"text": ""# + String(repeating: "a", count: 70_000) + #""}"#).utf8), [:],
                    .contentTooLarge, "too_large"
                ),
                (
                    Array((String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)).utf8), [:],
                    .badRequest, "bad_request"
                ),
                ([0xFF, 0xFE, 0x7B, 0x7D], ["Content-Type": "application/json"], .badRequest, "bad_request"),
            ]
            for (body, headers, status, code) in cases {
                let answer = try await api.call(.post, "/v1/posts", token: ana.token, body: body, headers: headers)
                #expect(
                    answer.status == status && answer.errorCode == code,
                    "\(String(decoding: body.prefix(40), as: UTF8.self))")
            }
            let unknownFields = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["text": "ok", "mood": ["x": 1]])
            #expect(unknownFields.status == .created, "unknown fields are ignored")
            #expect(api.head.rawValue == head.rawValue + 1)
        }
    }

    @Test("validation codes: empty and long text, unknown media and posts, self-follow, self-message")
    func validation() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let head = api.head
            let missingPost = "01m80z7bqwe02891pys1hfgzj2"
            let cases: [(HTTPRequest.Method, String, [String: Any], HTTPResponse.Status, String)] = [
                (.post, "/v1/posts", ["caption": "just a caption"], .unprocessableContent, "empty_text"),
                (.post, "/v1/posts", ["text": "  \n "], .unprocessableContent, "empty_text"),
                (
                    .post, "/v1/posts", ["text": String(repeating: "😀", count: 281)], .unprocessableContent,
                    "text_too_long"
                ),
                (.post, "/v1/posts", ["image": "../../etc/passwd"], .unprocessableContent, "unknown_media"),
                (.post, "/v1/posts", ["repostOf": missingPost], .unprocessableContent, "unknown_post"),
                (.post, "/v1/messages", ["to": ana.id, "text": "me"], .unprocessableContent, "self_message"),
                (.post, "/v1/messages", ["to": "nobody", "text": "hi"], .unprocessableContent, "unknown_user"),
                (.patch, "/v1/me", ["bio": String(repeating: "b", count: 301)], .unprocessableContent, "invalid_field"),
                (
                    .patch, "/v1/me", ["profileImage": "0000000000000000000000000a"], .unprocessableContent,
                    "unknown_media"
                ),
                (.put, "/v1/users/\(ana.id)/follow", [:], .unprocessableContent, "self_follow"),
                (.post, "/v1/posts/\(missingPost)/comments", ["text": "hi"], .notFound, "not_found"),
                (.put, "/v1/posts/\(missingPost)/like", [:], .notFound, "not_found"),
                (.put, "/v1/users/01m80z7bage00rh6fpw5t9cjqa/follow", [:], .notFound, "not_found"),
            ]
            for (method, path, body, status, code) in cases {
                let answer = try await api.call(method, path, token: ana.token, json: body)
                #expect(
                    answer.status == status && answer.errorCode == code,
                    "\(method) \(path) \(body.keys) → \(answer.errorCode ?? "-")")
            }
            #expect(api.head == head)
        }
    }

    @Test("bad query values, cursors, ids and routes: 400 or 404, never a 500")
    func badRequests() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            for path in [
                "/v1/feed/home?limit=0", "/v1/feed/home?limit=101", "/v1/feed/home?limit=ten",
                "/v1/feed/home?cursor=%%%",
                "/v1/feed/home?cursor=AAAA", "/v1/posts/01m80z7bqwe02891pys1hfgzj2/comments?order=sideways",
                "/v1/search/users?cursor=AAAA", "/v1/feed/home?limit=99999999999999999999999",
            ] {
                let answer = try await api.call(.get, path, token: ana.token)
                #expect(answer.status == .badRequest && answer.errorCode == "bad_request", "\(path)")
            }
            for path in [
                "/v1/users/..%2F..%2Fetc", "/v1/users/nope", "/v1/posts/x", "/v1/nothing-here", "/v2/feed/home",
            ] {
                let answer = try await api.call(.get, path, token: ana.token)
                #expect(answer.status == .notFound && answer.errorCode == "not_found", "\(path)")
            }
            let badMinimum = try await api.call(
                .get, "/v1/feed/home", token: ana.token, headers: ["Chorus-Min-Position": "soon"])
            #expect(badMinimum.status == .badRequest)
        }
    }
}

@Suite("API: an unavailable log")
struct UnavailableAPITests {
    @Test("when the log cannot be used, requests get 503 unavailable with Retry-After, never a 500")
    func closedLog() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            try #require(api.backend.log as? LMDBEventLog).close()
            for (method, path) in [(HTTPRequest.Method.post, "/v1/posts"), (.get, "/v1/me")] {
                let answer = try await api.call(method, path, token: ana.token, json: ["text": "x"])
                #expect(answer.status == .serviceUnavailable && answer.errorCode == "unavailable", "\(method) \(path)")
                #expect(answer.headers[.retryAfter] != nil)
            }
        }
    }
}
